import { join } from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/database.js';
import { migrate } from './db/migrate.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { resolveMasterKey } from './lib/master-key.js';
import { SecretBox } from './lib/secret-box.js';
import { PublicUrls } from './lib/urls.js';
import { AuthService } from './auth/auth.service.js';
import { OrgsRepository } from './orgs/orgs.repository.js';
import { OrgsService } from './orgs/orgs.service.js';
import { createRuntime, type Runtime } from './runtime/runtime.js';
import { DEFAULT_ARCHIVE_LIMITS } from './files/archive.js';
import { LocalBlobStore } from './files/blob-store.js';
import { FileSigner } from './files/file-signer.js';
import { createExtractors, OcrEngine } from './files/extractors/index.js';
import { FilesRepository } from './files/files.repository.js';
import { FilesService } from './files/files.service.js';
import { CustomFunctionsRepository } from './custom-functions/custom-functions.repository.js';
import { CustomFunctionsService } from './custom-functions/custom-functions.service.js';
import { SandboxPool } from './custom-functions/sandbox.js';

/** A background component of the worker role (task runner, indexer). */
export interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The composition root: every service is built here with plain constructors, and nowhere else.
 * Each domain adds its services in its own section below and its fields to this interface.
 */
export interface Container {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  urls: PublicUrls;
  secretBox: SecretBox;
  orgs: OrgsService;
  auth: AuthService;
  // runtime (issue 3): the TaskRunner, the run-time tool registry, context contributors, LLM resolution
  runtime: Runtime;
  // files and webhooks (issue 4)
  files: FilesService;
  // tool kinds (issue 6)
  customFunctions: CustomFunctionsService;
  /** Started by the worker role. */
  background: Startable[];
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  log?: Logger;
}

export async function createContainer(config: Config, opts: ContainerOptions = {}): Promise<Container> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: join(config.dataDir, 'agentry.db') });
  await migrate(db);
  const urls = new PublicUrls();
  urls.api = config.publicApiUrl ?? `http://localhost:${config.apiPort}`;
  urls.webhook = config.publicWebhookUrl ?? `http://localhost:${config.webhookPort}`;
  const secretBox = new SecretBox(resolveMasterKey(config.masterKey, config.dataDir));

  // --- organizations and authentication
  const orgsRepo = new OrgsRepository(db);
  const orgs = new OrgsService(orgsRepo, clock);
  const auth = new AuthService(orgsRepo, clock, config.jwt);

  const background: Startable[] = [];

  // --- agents (issue 2)

  // --- connectors (issue 5)

  // --- runtime: LLM providers, tool loop (issue 3)
  const runtime = createRuntime({
    config,
    secretBox,
    clock,
    log,
    submitter: () => {
      throw new Error('Sub-agents need the tasks service, which is not configured');
    },
  });

  // --- tasks: queue, worker, invoke (issue 3)

  // --- files and webhooks (issue 4)
  const ocr = new OcrEngine();
  background.push({ start: async () => {}, stop: () => ocr.close() });
  const files = new FilesService(
    new FilesRepository(db),
    new LocalBlobStore(join(config.dataDir, 'files')),
    new FileSigner(resolveMasterKey(config.masterKey, config.dataDir)),
    createExtractors(ocr),
    clock,
    urls,
    { ...config.files, archive: DEFAULT_ARCHIVE_LIMITS },
    log,
  );

  // --- tool kinds: custom functions, MCP, skills (issue 6)
  const sandbox = new SandboxPool();
  background.push({ start: async () => {}, stop: () => sandbox.close() });
  const customFunctions = new CustomFunctionsService(new CustomFunctionsRepository(db), sandbox, clock);

  // --- knowledge bases (issue 7)

  if (config.bootstrapApiKey) {
    const org = await orgs.ensureOrganization('default');
    await orgs.registerKey(org.id, config.bootstrapApiKey, 'bootstrap');
  }

  return {
    config,
    db,
    clock,
    log,
    urls,
    secretBox,
    orgs,
    auth,
    runtime,
    files,
    customFunctions,
    background,
    async close() {
      for (const b of background) await b.stop();
      await db.close();
    },
  };
}
