import type { Insertable } from 'kysely';
import type { Database } from '../db/schema.js';

/** An outbox row of the notifications domain, written by the queue with a task's final status. */
export type NewDeliveryRow = Insertable<Database['notification_deliveries']>;

/** What a task end needs to plan its notifications: the view is built only when there is something to send. */
export interface TaskEnd {
  status: string;
  /** The configuration of the agent version that ran (secrets revealed); undefined when the agent is gone. */
  agentConfig: Record<string, unknown> | undefined;
  callbackUrl: string | null;
  /** The task as its final status leaves it. */
  view: () => import('../notifications/notification-payload.js').TaskEndView;
}

/**
 * The port through which the tasks domain asks the notifications domain what to send when a task ends
 * (docs/notifications.md). The rows are committed with the final status, in the same transaction, so a crash
 * between the two loses nothing; `committed` then tells the dispatcher to look.
 */
export interface TaskEndNotifier {
  /** Outbox rows for this end; [] (at almost no cost) when the agent has no channels and no callback was asked. */
  plan(end: TaskEnd): NewDeliveryRow[];
  committed(): void;
}
