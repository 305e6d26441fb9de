import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { TaskRunner } from '../runtime/task-runner.js';
import { setLlmIoLimit } from './llm-io.js';
import { Metrics } from './metrics.js';
import { QueueStatsRepository } from './queue-stats.repository.js';
import { ObservedRunner } from './run-observer.js';
import type { Tracing } from './tracing.js';

/** The observability section of the container: what is built from the configuration, and the runner wrapper. */
export interface Observability {
  metrics?: Metrics;
  tracing?: Tracing;
  /** Wraps the TaskRunner the worker calls with the run observer (metrics, spans, the run-end log line). */
  observe(runner: TaskRunner): TaskRunner;
}

export async function createObservability(config: Config, db: Db, clock: Clock, log: Logger): Promise<Observability> {
  setLlmIoLimit(config.traceLlmIoChars);
  const queueStats = new QueueStatsRepository(db);
  const metrics = config.metrics.enabled
    ? new Metrics({ queueStats: () => queueStats.read(), poolStats: db.poolStats ? () => db.poolStats!() : undefined, now: () => clock.now() })
    : undefined;
  // The OpenTelemetry SDK and exporter are loaded only when an endpoint is set: about 10 MB a process does not pay.
  const tracing = config.otel ? (await import('./tracing.js')).createTracing(config.otel) : undefined;
  return {
    metrics,
    tracing,
    observe: (runner) => new ObservedRunner(runner, { metrics, tracing, log, clock }),
  };
}
