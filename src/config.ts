import { isSupportedCountry } from 'libphonenumber-js/max';
import { z } from 'zod';

/** The only reader of process.env. Everything else receives a frozen Config. */

const ROLES = ['api', 'webhooks', 'worker'] as const;
export type Role = (typeof ROLES)[number];

const boolish = z
  .string()
  .optional()
  .transform((v) => (v === undefined ? undefined : /^(1|true|yes|on)$/i.test(v)));

const port = z.coerce.number().int().min(0).max(65535);

const EnvSchema = z.object({
  AGENTRY_HOST: z.string().default('127.0.0.1'),
  AGENTRY_API_PORT: port.default(8080),
  AGENTRY_WEBHOOK_PORT: port.default(8081),
  AGENTRY_PUBLIC_API_URL: z.string().url().optional(),
  AGENTRY_PUBLIC_WEBHOOK_URL: z.string().url().optional(),
  AGENTRY_DATA_DIR: z.string().default('./.agentry'),
  DATABASE_URL: z.string().optional(),
  AGENTRY_BOOTSTRAP_API_KEY: z.string().min(16).optional(),
  AGENTRY_MASTER_KEY: z.string().optional(),
  AGENTRY_EGRESS_ALLOW: z.string().default(''),
  AGENTRY_ROLES: z.string().default('api,webhooks,worker'),
  AGENTRY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AGENTRY_JWT_ISSUER: z.string().optional(),
  AGENTRY_JWT_AUDIENCE: z.string().optional(),
  AGENTRY_JWT_JWKS_URL: z.string().url().optional(),
  AGENTRY_JWT_ORG_CLAIM: z.string().default('org_id'),
  AGENTRY_JWT_ROLE_CLAIM: z.string().default('agentry_role'),
  AGENTRY_JWT_DEFAULT_ROLE: z.enum(['admin', 'member', 'read-only']).default('member'),
  // Access (issue 24, docs/access.md): end-user OIDC pre-auth and rate limits.
  AGENTRY_OIDC_PRE_AUTH_ISSUER: z.string().url().optional(),
  AGENTRY_OIDC_PRE_AUTH_JWKS_URL: z.string().url().optional(),
  AGENTRY_RATE_LIMIT_KEY_PER_SECOND: z.coerce.number().min(0).default(50),
  AGENTRY_RATE_LIMIT_KEY_BURST: z.coerce.number().int().min(1).default(500),
  AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND: z.coerce.number().min(0).default(10),
  AGENTRY_RATE_LIMIT_WEBHOOK_BURST: z.coerce.number().int().min(1).default(100),
  AGENTRY_RATE_LIMIT_LEASE: z.coerce.number().int().min(1).max(10_000).default(10),
  AGENTRY_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  AGENTRY_MAX_PAUSED_RUNS: z.coerce.number().int().min(0).max(100_000).default(200),
  /** Unset: a quarter of AGENTRY_MAX_PAUSED_RUNS, rounded up (see loadConfig); 0: no per-organization bound. */
  AGENTRY_MAX_PAUSED_RUNS_PER_ORG: z.coerce.number().int().min(0).max(100_000).optional(),
  AGENTRY_TASK_LEASE_MS: z.coerce.number().int().min(1000).default(30_000),
  /** How often a worker looks for due schedules (docs/schedules.md): a schedule fires at most this late. */
  AGENTRY_SCHEDULER_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  AGENTRY_SYNC_TIMEOUT_MS: z.coerce.number().int().min(100).default(300_000),
  AGENTRY_SCHEMA_NODE_BUDGET: z.coerce.number().int().min(100).default(5000),
  AGENTRY_MAX_FILE_BYTES: z.coerce.number().int().min(1).default(25 * 1024 * 1024),
  AGENTRY_MAX_REQUEST_BYTES: z.coerce.number().int().min(1).default(100 * 1024 * 1024),
  AGENTRY_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  AGENTRY_MAX_FILES_PER_REQUEST: z.coerce.number().int().min(1).max(10_000).default(100),
  AGENTRY_MAX_JSON_DEPTH: z.coerce.number().int().min(16).max(10_000).default(256),
  AGENTRY_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(300_000),
  AGENTRY_EXTRACT_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  AGENTRY_EXTRACT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  AGENTRY_EXTRACT_MEMORY_MB: z.coerce.number().int().min(64).default(1024),
  AGENTRY_EXTRACT_QUEUE: z.coerce.number().int().min(0).default(8),
  AGENTRY_EXTRACT_QUEUE_PER_ORG: z.coerce.number().int().min(0).default(4),
  AGENTRY_MAX_IMAGE_PIXELS: z.coerce.number().int().min(1).default(40_000_000),
  AGENTRY_MAX_IMAGE_SIDE: z.coerce.number().int().min(1).default(30_000),
  AGENTRY_MAX_SHEET_CELLS: z.coerce.number().int().min(1).default(1_000_000),
  AGENTRY_BLOB_STORE: z.enum(['local', 's3']).default('local'),
  AGENTRY_S3_ENDPOINT: z.string().optional(),
  AGENTRY_S3_BUCKET: z.string().optional(),
  AGENTRY_S3_REGION: z.string().default('us-east-1'),
  AGENTRY_S3_ACCESS_KEY_ID: z.string().optional(),
  AGENTRY_S3_SECRET_ACCESS_KEY: z.string().optional(),
  /** Deadline of one S3 request, its answer's body included: a stalled endpoint fails the call instead of holding it. */
  AGENTRY_S3_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  AGENTRY_METRICS: boolish,
  AGENTRY_METRICS_TOKEN: z.string().min(16).optional(),
  AGENTRY_METRICS_PORT: port.optional(),
  AGENTRY_LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  AGENTRY_TRACE_LLM_IO_CHARS: z.coerce.number().int().min(0).max(1_000_000).default(16_000),
  // Bounds of one LLM call and of one run (docs/operations.md#settings): generous enough for reasoning models.
  AGENTRY_LLM_FIRST_BYTE_TIMEOUT_MS: z.coerce.number().int().min(1).default(120_000),
  AGENTRY_LLM_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1).default(300_000),
  AGENTRY_LLM_CALL_TIMEOUT_MS: z.coerce.number().int().min(1).default(1_800_000),
  AGENTRY_LLM_MAX_ANSWER_CHARS: z.coerce.number().int().min(1).default(4_000_000),
  AGENTRY_RUN_TIMEOUT_MS: z.coerce.number().int().min(0).default(3_600_000),
  AGENTRY_APPROVAL_TIMEOUT_MS: z.coerce.number().int().min(0).default(0),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().default('agentry'),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: boolish,
  AGENTRY_EMBEDDINGS_BASE_URL: z.string().url().optional(),
  AGENTRY_EMBEDDINGS_MODEL: z.string().default('text-embedding-3-small'),
  AGENTRY_EMBEDDINGS_API_KEY: z.string().optional(),
  AGENTRY_SANDBOX_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  AGENTRY_SANDBOX_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  AGENTRY_SANDBOX_MEMORY_MB: z.coerce.number().int().min(4).max(1024).default(64),
  AGENTRY_SANDBOX_QUEUE_PER_ORG: z.coerce.number().int().min(1).default(50),
  AGENTRY_PII_DEFAULT_REGION: z
    .string()
    .default('US')
    .transform((v) => v.trim().toUpperCase())
    .refine((v) => isSupportedCountry(v), 'an ISO 3166 alpha-2 region that has a phone numbering plan, e.g. US, GB, DE'),
  AGENTRY_MODERATION_MODEL: z.string().min(1).default('omni-moderation-latest'),
  // Task-end notifications (docs/notifications.md)
  AGENTRY_NOTIFY_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  AGENTRY_NOTIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(10_000),
  AGENTRY_NOTIFY_RETRY_BASE_MS: z.coerce.number().int().min(10).default(5_000),
  AGENTRY_NOTIFY_RETRY_MAX_MS: z.coerce.number().int().min(10).default(3_600_000),
  AGENTRY_NOTIFY_GIVE_UP_MS: z.coerce.number().int().min(1000).default(86_400_000),
  AGENTRY_NOTIFY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  // Task retention (docs/decisions.md#tasks-retention): 0 keeps tasks forever. At least a day, because the daily run
  // limits count the runs (`task_runs`) of the current UTC day, which a shorter retention would delete.
  AGENTRY_TASK_RETENTION_DAYS: z.coerce
    .number()
    .refine((v) => Number.isFinite(v) && (v === 0 || v >= 1), 'a number of days, at least 1 (0 or unset keeps tasks forever)')
    .default(0),
});

export interface Config {
  host: string;
  apiPort: number;
  webhookPort: number;
  /** Undefined until the listener is bound when the port is 0; use publicApiUrl() after start. */
  publicApiUrl?: string;
  publicWebhookUrl?: string;
  dataDir: string;
  databaseUrl?: string;
  bootstrapApiKey?: string;
  masterKey?: string;
  egressAllow: string[];
  roles: ReadonlySet<Role>;
  logLevel: string;
  /** `json` (one object a line, the default) or `pretty` (coloured single lines for a terminal). */
  logFormat: 'json' | 'pretty';
  /** Prometheus /metrics (src/observability/metrics.ts): on unless AGENTRY_METRICS is false. */
  metrics: { enabled: boolean; token?: string; port?: number };
  /** The most characters of an LLM call's input and of its output the trace keeps (0: none). */
  traceLlmIoChars: number;
  /** Bounds of one LLM call (src/llm/llm-call-limits.ts): response headers per attempt, silence, whole call, answer size. */
  llmCall: { firstByteMs: number; idleMs: number; totalMs: number; maxAnswerChars: number };
  /** OpenTelemetry export over OTLP/HTTP; undefined when no endpoint is set (no tracer is built at all). */
  otel?: { tracesUrl: string; headers: Record<string, string>; serviceName: string; captureContent: boolean };
  jwt?: { issuer?: string; audience?: string; jwksUrl: string; orgClaim: string; roleClaim: string; defaultRole: 'admin' | 'member' | 'read-only' };
  /** End-user tokens of `use_oidc_pre_auth` agents: the issuer they must come from and its JWKS (default: discovery). */
  oidcPreAuth?: { issuer: string; jwksUrl?: string };
  /** Token buckets (src/auth/rate-limiter.ts): per API key and per public webhook URL; perSecond 0 turns one off. */
  rateLimits: { key: { perSecond: number; burst: number }; webhook: { perSecond: number; burst: number }; lease: number };
  /**
   * maxPausedRuns: runs paused for approval that lend their worker slot (SlotLedger.parkForApproval).
   * maxPausedRunsPerOrg: runs of one organization paused in a worker past which that worker starts none of its new
   * tasks (SlotLedger.heldBack); 0: no such bound. runTimeoutMs: longest a run may work, waits for a person or a
   * child task excepted (src/tasks/run-deadline.ts); 0: no limit. approvalTimeoutMs: longest a run waits for a
   * person's decision before its task ends `error` (run-deadline.ts); 0: it waits until someone decides or stops it.
   */
  worker: { concurrency: number; maxPausedRuns: number; maxPausedRunsPerOrg: number; leaseMs: number; schedulerPollMs: number; runTimeoutMs: number; approvalTimeoutMs: number };
  syncTimeoutMs: number;
  schemaNodeBudget: number;
  /** Upload limits; `maxFilesPerRequest` is checked while a multipart body streams in. */
  files: { maxFileBytes: number; maxRequestBytes: number; maxFilesPerRequest: number };
  /** Deepest JSON nesting a request body may have (checked in one pass over the text before parsing). */
  maxJsonDepth: number;
  /**
   * Largest request body apart from uploaded files, on both listeners: a JSON or form body, and a multipart body's
   * text fields together (uploads have their own limits in `files`).
   */
  maxBodyBytes: number;
  /** Longest a client may take to send one whole request (headers and body), on both listeners. */
  requestTimeoutMs: number;
  /** The extraction host (child processes reading uploads) and what it may decode. */
  extraction: {
    processes: number;
    timeoutMs: number;
    memoryMb: number;
    queueLimit: number;
    queuePerOrg: number;
    maxImagePixels: number;
    maxImageSide: number;
    maxSheetCells: number;
  };
  blob: {
    kind: 'local' | 's3';
    s3?: { endpoint?: string; bucket: string; region: string; accessKeyId?: string; secretAccessKey?: string; timeoutMs: number };
  };
  /** Environment values that providers may read for server-level LLM credentials (OPENAI_API_KEY, ...). */
  providerEnv: Readonly<Record<string, string>>;
  /** OpenAI-compatible embeddings endpoint for knowledge-base vector search; lexical search only when unset. */
  embeddings?: { baseUrl: string; model: string; apiKey?: string };
  /** Custom-function sandbox: threads (default: half the CPUs, 1..4), limits of one call, waiting calls per organization. */
  sandbox: { threads?: number; timeoutMs: number; memoryBytes: number; maxQueuePerOrg: number };
  /** agno_settings guardrails (docs/guardrails.md): phone region for numbers without a country code; moderation model. */
  guardrails: { piiDefaultRegion: string; moderationModel: string };
  /** Task-end notifications: the dispatcher's parallelism, one attempt's deadline, retry backoff, give-up time, idle poll. */
  notify: { concurrency: number; timeoutMs: number; retryBaseMs: number; retryMaxMs: number; giveUpMs: number; pollMs: number };
  /** Days after which a finished task is deleted with its records (src/tasks/task-retention.ts); 0 keeps them forever. */
  taskRetentionDays: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  // An empty value is an unset one (compose files pass `${VAR:-}` through as ''); defaults then apply.
  const parsed = EnvSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const roles = e.AGENTRY_ROLES.split(',').map((r) => r.trim()).filter(Boolean);
  for (const r of roles) {
    if (!(ROLES as readonly string[]).includes(r)) throw new Error(`Invalid configuration: unknown role "${r}" in AGENTRY_ROLES`);
  }
  const providerEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v && /_(API_KEY|API_TOKEN|ACCOUNT_ID|ACCESS_KEY_ID|SECRET_ACCESS_KEY|REGION|RESOURCE_NAME)$/.test(k)) providerEnv[k] = v;
  }
  const config: Config = {
    host: e.AGENTRY_HOST,
    apiPort: e.AGENTRY_API_PORT,
    webhookPort: e.AGENTRY_WEBHOOK_PORT,
    publicApiUrl: e.AGENTRY_PUBLIC_API_URL?.replace(/\/+$/, ''),
    publicWebhookUrl: e.AGENTRY_PUBLIC_WEBHOOK_URL?.replace(/\/+$/, ''),
    dataDir: e.AGENTRY_DATA_DIR,
    databaseUrl: e.DATABASE_URL || undefined,
    bootstrapApiKey: e.AGENTRY_BOOTSTRAP_API_KEY,
    masterKey: e.AGENTRY_MASTER_KEY,
    egressAllow: e.AGENTRY_EGRESS_ALLOW.split(',').map((s) => s.trim()).filter(Boolean),
    roles: new Set(roles as Role[]),
    logLevel: e.AGENTRY_LOG_LEVEL,
    logFormat: e.AGENTRY_LOG_FORMAT,
    metrics: { enabled: e.AGENTRY_METRICS !== false, token: e.AGENTRY_METRICS_TOKEN, port: e.AGENTRY_METRICS_PORT },
    traceLlmIoChars: e.AGENTRY_TRACE_LLM_IO_CHARS,
    llmCall: {
      firstByteMs: e.AGENTRY_LLM_FIRST_BYTE_TIMEOUT_MS,
      idleMs: e.AGENTRY_LLM_IDLE_TIMEOUT_MS,
      totalMs: e.AGENTRY_LLM_CALL_TIMEOUT_MS,
      maxAnswerChars: e.AGENTRY_LLM_MAX_ANSWER_CHARS,
    },
    otel: otelConfig(e),
    jwt: e.AGENTRY_JWT_JWKS_URL
      ? {
          issuer: e.AGENTRY_JWT_ISSUER,
          audience: e.AGENTRY_JWT_AUDIENCE,
          jwksUrl: e.AGENTRY_JWT_JWKS_URL,
          orgClaim: e.AGENTRY_JWT_ORG_CLAIM,
          roleClaim: e.AGENTRY_JWT_ROLE_CLAIM,
          defaultRole: e.AGENTRY_JWT_DEFAULT_ROLE,
        }
      : undefined,
    oidcPreAuth: e.AGENTRY_OIDC_PRE_AUTH_ISSUER ? { issuer: e.AGENTRY_OIDC_PRE_AUTH_ISSUER, jwksUrl: e.AGENTRY_OIDC_PRE_AUTH_JWKS_URL } : undefined,
    rateLimits: {
      key: { perSecond: e.AGENTRY_RATE_LIMIT_KEY_PER_SECOND, burst: e.AGENTRY_RATE_LIMIT_KEY_BURST },
      webhook: { perSecond: e.AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND, burst: e.AGENTRY_RATE_LIMIT_WEBHOOK_BURST },
      lease: e.AGENTRY_RATE_LIMIT_LEASE,
    },
    worker: {
      concurrency: e.AGENTRY_WORKER_CONCURRENCY,
      maxPausedRuns: e.AGENTRY_MAX_PAUSED_RUNS,
      // A quarter by default: one organization's undecided approvals take at most a quarter of the loans, so it
      // takes four organizations at their bound, not one, to use them all up (docs/decisions.md, "Concurrency").
      maxPausedRunsPerOrg: e.AGENTRY_MAX_PAUSED_RUNS_PER_ORG ?? Math.ceil(e.AGENTRY_MAX_PAUSED_RUNS / 4),
      leaseMs: e.AGENTRY_TASK_LEASE_MS,
      schedulerPollMs: e.AGENTRY_SCHEDULER_POLL_MS,
      runTimeoutMs: e.AGENTRY_RUN_TIMEOUT_MS,
      approvalTimeoutMs: e.AGENTRY_APPROVAL_TIMEOUT_MS,
    },
    syncTimeoutMs: e.AGENTRY_SYNC_TIMEOUT_MS,
    schemaNodeBudget: e.AGENTRY_SCHEMA_NODE_BUDGET,
    files: { maxFileBytes: e.AGENTRY_MAX_FILE_BYTES, maxRequestBytes: e.AGENTRY_MAX_REQUEST_BYTES, maxFilesPerRequest: e.AGENTRY_MAX_FILES_PER_REQUEST },
    maxJsonDepth: e.AGENTRY_MAX_JSON_DEPTH,
    maxBodyBytes: e.AGENTRY_MAX_BODY_BYTES,
    requestTimeoutMs: e.AGENTRY_REQUEST_TIMEOUT_MS,
    extraction: {
      processes: e.AGENTRY_EXTRACT_PROCESSES,
      timeoutMs: e.AGENTRY_EXTRACT_TIMEOUT_MS,
      memoryMb: e.AGENTRY_EXTRACT_MEMORY_MB,
      queueLimit: e.AGENTRY_EXTRACT_QUEUE,
      queuePerOrg: e.AGENTRY_EXTRACT_QUEUE_PER_ORG,
      maxImagePixels: e.AGENTRY_MAX_IMAGE_PIXELS,
      maxImageSide: e.AGENTRY_MAX_IMAGE_SIDE,
      maxSheetCells: e.AGENTRY_MAX_SHEET_CELLS,
    },
    blob: {
      kind: e.AGENTRY_BLOB_STORE,
      s3: e.AGENTRY_S3_BUCKET
        ? {
            endpoint: e.AGENTRY_S3_ENDPOINT,
            bucket: e.AGENTRY_S3_BUCKET,
            region: e.AGENTRY_S3_REGION,
            accessKeyId: e.AGENTRY_S3_ACCESS_KEY_ID,
            secretAccessKey: e.AGENTRY_S3_SECRET_ACCESS_KEY,
            timeoutMs: e.AGENTRY_S3_TIMEOUT_MS,
          }
        : undefined,
    },
    providerEnv,
    notify: {
      concurrency: e.AGENTRY_NOTIFY_CONCURRENCY,
      timeoutMs: e.AGENTRY_NOTIFY_TIMEOUT_MS,
      retryBaseMs: e.AGENTRY_NOTIFY_RETRY_BASE_MS,
      retryMaxMs: e.AGENTRY_NOTIFY_RETRY_MAX_MS,
      giveUpMs: e.AGENTRY_NOTIFY_GIVE_UP_MS,
      pollMs: e.AGENTRY_NOTIFY_POLL_MS,
    },
    taskRetentionDays: e.AGENTRY_TASK_RETENTION_DAYS,
    sandbox: {
      threads: e.AGENTRY_SANDBOX_THREADS,
      timeoutMs: e.AGENTRY_SANDBOX_TIMEOUT_MS,
      memoryBytes: e.AGENTRY_SANDBOX_MEMORY_MB * 1024 * 1024,
      maxQueuePerOrg: e.AGENTRY_SANDBOX_QUEUE_PER_ORG,
    },
    guardrails: { piiDefaultRegion: e.AGENTRY_PII_DEFAULT_REGION, moderationModel: e.AGENTRY_MODERATION_MODEL },
    embeddings: e.AGENTRY_EMBEDDINGS_BASE_URL
      ? { baseUrl: e.AGENTRY_EMBEDDINGS_BASE_URL.replace(/\/+$/, ''), model: e.AGENTRY_EMBEDDINGS_MODEL, apiKey: e.AGENTRY_EMBEDDINGS_API_KEY }
      : undefined,
    ...overrides,
  };
  return Object.freeze(config);
}

/** The OTLP/HTTP traces URL as the OpenTelemetry spec derives it: the signal's own endpoint as is, else base + /v1/traces. */
function otelConfig(e: z.output<typeof EnvSchema>): Config['otel'] {
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT && `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  if (!url) return undefined;
  const headers: Record<string, string> = {};
  // W3C baggage-style list: key=value,key2=value2 (values percent-decoded), as OTEL_EXPORTER_OTLP_HEADERS is defined.
  for (const pair of (e.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    const i = pair.indexOf('=');
    if (i > 0) headers[pair.slice(0, i).trim()] = decodeURIComponent(pair.slice(i + 1).trim());
  }
  return { tracesUrl: url, headers, serviceName: e.OTEL_SERVICE_NAME, captureContent: e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === true };
}

/**
 * Where the remote CLI commands (agents, invoke, tasks, keys list|revoke) send their requests, and how long one may
 * take (AGENTRY_CLI_TIMEOUT_MS, src/cli/api-client.ts); flags override the first two.
 */
export function cliTarget(env: NodeJS.ProcessEnv = process.env): { url: string; apiKey?: string; timeoutMs?: number } {
  const timeout = env.AGENTRY_CLI_TIMEOUT_MS;
  let timeoutMs: number | undefined;
  if (timeout) {
    timeoutMs = Number(timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 100) throw new Error(`AGENTRY_CLI_TIMEOUT_MS must be a whole number of milliseconds, at least 100 (got ${JSON.stringify(timeout)})`);
  }
  return { url: (env.AGENTRY_URL || 'http://localhost:8080').replace(/\/+$/, ''), apiKey: env.AGENTRY_API_KEY || undefined, timeoutMs };
}
