/** The notifications domain's tables (migration 0013). Times are epoch ms. */
export interface NotificationsTables {
  /** The outbox: one row per (task end, target); see notification.dispatcher.ts. */
  notification_deliveries: {
    organization_id: string;
    id: string;
    task_id: string;
    agent_id: string;
    /** `task.completed`, `task.failed` or `task.error`. */
    event: string;
    /** `webhook`, `slack`, `email` or `callback` (a webhook call's callback_url). */
    channel: string;
    /** The channel's target as JSON (URL, recipients, SMTP server); a Slack URL is sealed inside it. */
    target: string;
    /** The notification body as JSON, fixed when the task ended: every attempt sends the same bytes. */
    payload: string;
    /** `pending`, `delivered` or `failed` (given up, or refused for good). */
    status: string;
    attempts: number;
    next_attempt_at: number;
    give_up_at: number;
    /** The dispatcher claim holding the row (`owner:token`) and until when. */
    lease_owner: string | null;
    lease_expires_at: number | null;
    last_error: string | null;
    created_at: number;
    updated_at: number;
    delivered_at: number | null;
  };
  notification_attempts: {
    organization_id: string;
    delivery_id: string;
    attempt: number;
    started_at: number;
    latency_ms: number;
    /** `delivered`, `retry` (will be tried again) or `failed` (given up). */
    outcome: string;
    status_code: number | null;
    error: string | null;
  };
  /** Each agent's Standard Webhooks signing secret (`whsec_...`), sealed. */
  notification_signing_keys: {
    organization_id: string;
    agent_id: string;
    sealed_secret: string;
    created_at: number;
  };
}
