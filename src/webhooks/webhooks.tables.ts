export interface WebhooksTables {
  webhook_channels: {
    agent_id: string;
    organization_id: string;
    secret_hash: string;
    created_at: number;
    updated_at: number;
  };
}
