import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import { newSigningSecret } from './notification-payload.js';
import type { NotificationsRepository } from './notifications.repository.js';

/**
 * Each agent's Standard Webhooks secret, sealed at rest. Created on first need (the first signed delivery, or the
 * rotate endpoint, which is the only place the plain value is ever shown).
 */
export class SigningKeys {
  constructor(
    private readonly repo: NotificationsRepository,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async secretFor(orgId: string, agentId: string): Promise<string> {
    let key = await this.repo.signingKey(orgId, agentId);
    if (!key) {
      await this.repo.insertSigningKeyIfAbsent(orgId, agentId, this.box.seal(newSigningSecret()), this.clock.now());
      key = await this.repo.signingKey(orgId, agentId);
    }
    return this.box.open(key!.sealed);
  }

  /** A new secret replaces the old at once; the plain value is returned to be shown once. */
  async rotate(orgId: string, agentId: string): Promise<{ secret: string; createdAt: number }> {
    const secret = newSigningSecret();
    const now = this.clock.now();
    await this.repo.replaceSigningKey(orgId, agentId, this.box.seal(secret), now);
    return { secret, createdAt: now };
  }

  async createdAt(orgId: string, agentId: string): Promise<number | undefined> {
    return (await this.repo.signingKey(orgId, agentId))?.createdAt;
  }
}
