/**
 * The configuration tables: what the hot paths cache (a webhook's channel and agent, an API key) is read from
 * these, and they change rarely. Db.configVersion moves whenever one of them may have changed.
 */
export const CONFIG_TABLES = ['organizations', 'api_keys', 'agents', 'agent_versions', 'webhook_channels'] as const;

/** A statement that writes to a configuration table, or any schema change. */
export const CONFIG_CHANGE = new RegExp(
  String.raw`^\s*(?:(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?(?:${CONFIG_TABLES.join('|')})"?[\s(]|(?:alter|drop|create|truncate)\s)`,
  'i',
);

/** The PostgreSQL channel configuration-table triggers notify on commit (migration 0011). */
export const CONFIG_CHANNEL = 'agentry_config';
