import type { Startable } from '../lib/lifecycle.js';
import type { Db } from '../db/database.js';
import type { EmbeddingProvider } from '../knowledge/embeddings.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { MemoryToolProvider } from '../runtime/tools/memory.tools.js';
import type { Runtime } from '../runtime/runtime.js';
import type { TaskSignals } from '../tasks/task-signals.js';
import { TasksRepository } from '../tasks/tasks.repository.js';
import { MemoryContext, UserContext } from './memory-context.js';
import { MemoryExtractor } from './memory-extractor.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryService, type AgentLookup } from './memory.service.js';

export interface MemoryModule {
  memories: MemoryService;
  /** Extraction after tasks; a Startable of the worker role (stop drops the queue and waits for calls under way). */
  extractor: MemoryExtractor & Startable;
}

/**
 * The memory domain's section of the container: the service, and its places in the runtime (the memories and
 * "about the user" context contributors, the agentic memory tools, the session summaries' store and the extraction
 * observer). Extraction events go to the task's trace through the tasks repository, with the task's signal.
 */
export function createMemoryModule(d: {
  db: Db;
  agents: AgentLookup;
  runtime: Runtime;
  signals: Pick<TaskSignals, 'publish'>;
  /** The knowledge bases' embedding endpoint (AGENTRY_EMBEDDINGS_*), when configured. */
  embeddings: EmbeddingProvider | undefined;
  clock: Clock;
  log: Logger;
}): MemoryModule {
  const repo = new MemoryRepository(d.db);
  const memories = new MemoryService(repo, d.agents, d.clock, d.embeddings);
  const taskTrace = new TasksRepository(d.db);
  const extractor = new MemoryExtractor({
    memories,
    llm: d.runtime.llm,
    guardrails: d.runtime.guardrails,
    clock: d.clock,
    log: d.log,
    trace: {
      append: async (organizationId, taskId, type, data) => {
        await taskTrace.appendEvent(undefined, { organization_id: organizationId, task_id: taskId, type, time: d.clock.now(), data: JSON.stringify(data) });
        d.signals.publish({ kind: 'task', organizationId, taskId, statusChanged: false });
      },
    },
  });
  d.runtime.hooks.observe('memory', extractor);
  d.runtime.hooks.summaries = {
    get: (org, taskId) => repo.summary(org, taskId),
    put: (org, taskId, run, summary) => repo.putSummary(org, taskId, run, summary, d.clock.now()),
  };
  d.runtime.tools.register('memory', new MemoryToolProvider(memories));
  d.runtime.context.register('memories', new MemoryContext(memories));
  d.runtime.context.register('user', new UserContext());
  return { memories, extractor };
}
