import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { FilesService } from '../files/files.service.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { SafeFetch } from '../net/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { KnowledgeToolProvider } from '../runtime/tools/knowledge.tools.js';
import { ChunkStoreRepository } from './chunk-store.repository.js';
import { DocumentReader } from './document-reader.js';
import { OpenAiCompatibleEmbeddings, type EmbeddingProvider } from './embeddings.js';
import { JobQueueRepository } from './job-queue.repository.js';
import { JobWakeups } from './job-wakeups.js';
import { KnowledgeContext } from './knowledge-context.js';
import { KnowledgeIndexer } from './knowledge.indexer.js';
import { KnowledgeRepository } from './knowledge.repository.js';
import { KnowledgeService, type KnowledgePorts } from './knowledge.service.js';

export interface KnowledgeModule {
  knowledge: KnowledgeService;
  /** A Startable of the worker role: indexes queued documents. */
  indexer: KnowledgeIndexer;
  /** The embedding endpoint (AGENTRY_EMBEDDINGS_*), when configured; memory search uses it too. */
  embeddings: EmbeddingProvider | undefined;
}

/** Knowledge bases (issue 7): CRUD, documents, search; the indexer; the `knowledge` tool kind and context contributor. */
export function createKnowledgeModule(d: {
  db: Db;
  config: Config;
  files: FilesService;
  /** Removes the blobs of deleted documents' files after the commit (src/files/file-disposal.ts). */
  removeBlobs: KnowledgePorts['removeBlobs'];
  safeFetch: SafeFetch;
  agentExists: KnowledgePorts['agentExists'];
  runtime: Runtime;
  clock: Clock;
  log: Logger;
}): KnowledgeModule {
  const repo = new KnowledgeRepository(d.db);
  const chunks = new ChunkStoreRepository(d.db);
  const jobs = new JobQueueRepository(d.db);
  const embeddings = d.config.embeddings ? new OpenAiCompatibleEmbeddings(d.config.embeddings) : undefined;
  const reader = new DocumentReader(d.files, d.safeFetch, { maxBytes: d.config.files.maxFileBytes, fetchTimeoutMs: 60_000 });
  const wakeups = new JobWakeups(d.db, d.log);
  const indexer = new KnowledgeIndexer(jobs, repo, chunks, reader, embeddings, d.clock, d.log, { concurrency: 2, leaseMs: d.config.worker.leaseMs, pollMs: 1000, retryBaseMs: 2000 }, wakeups);
  const knowledge = new KnowledgeService(repo, chunks, jobs, d.files, reader, embeddings, d.clock, d.log, {
    // This process's indexer at once; the others' through the database's notifications.
    onEnqueued: () => {
      indexer.wake();
      void wakeups.notify();
    },
    agentExists: d.agentExists,
    removeBlobs: d.removeBlobs,
  });
  d.runtime.tools.register('knowledge', new KnowledgeToolProvider(knowledge));
  d.runtime.context.register('knowledge', new KnowledgeContext(knowledge));
  return { knowledge, indexer, embeddings };
}
