import { AppError } from '../errors.js';
import { isoTime, type Clock } from '../lib/clock.js';
import { REDACTED } from '../lib/secret-box.js';
import { presentDelivery, type DeliveryView } from './notification.presenter.js';
import type { NotificationsRepository } from './notifications.repository.js';
import type { SigningKeys } from './signing-keys.js';

/** What this domain needs from tasks and agents: existence in the organization (a 404 otherwise). */
export interface NotificationOwners {
  assertTask(organizationId: string, taskId: string): Promise<void>;
  agentExists(organizationId: string, agentId: string): Promise<boolean>;
}

export interface SigningSecretView {
  /** The plain secret right after a rotation, "********" otherwise, null when none exists yet. */
  secret: string | null;
  created_at: string | null;
}

/** Use cases of notifications: a task's deliveries and their re-sending, and the agents' signing secrets. */
export class NotificationsService {
  /** Set by the container: the local dispatcher, woken when a delivery is put back in the outbox. */
  onResend?: () => void;

  constructor(
    private readonly repo: NotificationsRepository,
    private readonly keys: SigningKeys,
    private readonly owners: NotificationOwners,
    private readonly clock: Clock,
    private readonly giveUpMs: number,
  ) {}

  async list(organizationId: string, taskId: string): Promise<DeliveryView[]> {
    await this.owners.assertTask(organizationId, taskId);
    const { deliveries, attempts } = await this.repo.listForTask(organizationId, taskId);
    const byDelivery = new Map<string, typeof attempts>();
    for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
    return deliveries.map((d) => presentDelivery(d, byDelivery.get(d.id) ?? []));
  }

  /** A delivered or given-up delivery goes out again, with the same payload and id, and a new give-up time. */
  async resend(organizationId: string, taskId: string, deliveryId: string): Promise<DeliveryView> {
    await this.owners.assertTask(organizationId, taskId);
    const now = this.clock.now();
    const row = await this.repo.resend(organizationId, taskId, deliveryId, now, now + this.giveUpMs);
    if (!row) {
      if (!(await this.repo.find(organizationId, taskId, deliveryId))) throw AppError.notFound('Notification');
      throw new AppError('conflict', 'The notification is still being delivered');
    }
    this.onResend?.();
    return (await this.list(organizationId, taskId)).find((d) => d.id === deliveryId)!;
  }

  async signingSecret(organizationId: string, agentId: string): Promise<SigningSecretView> {
    await this.assertAgent(organizationId, agentId);
    const at = await this.keys.createdAt(organizationId, agentId);
    return { secret: at === undefined ? null : REDACTED, created_at: at === undefined ? null : isoTime(at) };
  }

  /** Creates or replaces the agent's secret; the only answer that shows it. */
  async rotateSigningSecret(organizationId: string, agentId: string): Promise<SigningSecretView> {
    await this.assertAgent(organizationId, agentId);
    const { secret, createdAt } = await this.keys.rotate(organizationId, agentId);
    return { secret, created_at: isoTime(createdAt) };
  }

  private async assertAgent(organizationId: string, agentId: string): Promise<void> {
    if (!(await this.owners.agentExists(organizationId, agentId))) throw AppError.notFound('Agent');
  }
}
