import { join } from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/database.js';
import { migrate } from './db/migrate.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { resolveMasterKey } from './lib/master-key.js';
import { ensurePrivateDir } from './lib/private-files.js';
import { SchemaChecker } from './lib/schema-checker.js';
import { SecretBox } from './lib/secret-box.js';
import { PublicUrls } from './lib/urls.js';
import { createEgressPolicy, createSafeFetch, type EgressPolicy, type SafeFetch } from './net/index.js';

/** What every domain may use: in the Container as is. */
export interface Platform {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  urls: PublicUrls;
  secretBox: SecretBox;
}

/** The platform and what only the composition root hands on (the master key, the egress policy, the schema worker). */
export interface PlatformParts extends Platform {
  masterKey: Buffer;
  egress: EgressPolicy;
  /** Every outbound call made for a user goes through it (docs/contract.md#egress). */
  safeFetch: SafeFetch;
  schemaChecker: SchemaChecker;
}

/**
 * The platform under the domains: the private data directory, the database (migrated), the master key, public
 * addresses, the egress-checked fetch and the schema worker.
 */
export async function createPlatform(config: Config, opts: { clock?: Clock; log?: Logger }): Promise<PlatformParts> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel, config.logFormat);
  // The data directory (database, master key, files) is the service user's alone: 0700, created or tightened.
  ensurePrivateDir(config.dataDir, (m) => log.warn(m));
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: join(config.dataDir, 'agentry.db'), log });
  // Before migrating: data migrations may seal stored values (0012).
  const masterKey = resolveMasterKey(config.masterKey, config.dataDir);
  const secretBox = new SecretBox(masterKey);
  await migrate(db, { secretBox, log });
  const urls = new PublicUrls();
  urls.api = config.publicApiUrl ?? `http://localhost:${config.apiPort}`;
  urls.webhook = config.publicWebhookUrl ?? `http://localhost:${config.webhookPort}`;
  // Every outbound call made for a user (connector invoke, MCP, knowledge-base URLs, llm_api_base) goes through this fetch:
  // the egress policy (docs/contract.md#egress), checked on the connected address of every hop.
  const egress = createEgressPolicy(config.egressAllow);
  // Tenant JSON Schemas (custom-function inputs, connector inputs, output schemas, tool arguments) are compiled and
  // run on a worker thread: a large one costs hundreds of milliseconds, which must not stall this event loop.
  const schemaChecker = new SchemaChecker();
  return { config, db, clock, log, urls, secretBox, masterKey, egress, safeFetch: createSafeFetch(egress), schemaChecker };
}
