import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { IndexedCounter, IndexedHistogram } from './indexed-series.js';

/**
 * The process's Prometheus metrics (GET /metrics). Everything on a request or run path is an in-memory counter or
 * histogram update (a map lookup and an add); whatever needs a query (queue depth and age, the PostgreSQL pool) is a
 * gauge read at scrape time through `collectors`, so no request ever waits for a metric.
 *
 * Labels are bounded: routes are the router's patterns (`/v1/agents/:agent_id`), never raw URLs; an unmatched
 * path is `unmatched`; agents are ids (one series per agent), providers and models come from the agent settings
 * the API accepted; tool calls are counted by outcome, not by name (names are tenant-chosen and unbounded).
 */

/** Seconds: from a cached webhook answer (~100 us) to a long agent run. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export interface QueueStats {
  /** Tasks by status among pending, executing, paused. */
  byStatus: Record<string, number>;
  /** Webhook tasks committed to the inbox and not yet moved into tasks (task-inbox.ts). */
  inbox: number;
  /** queued_at of the oldest pending task (epoch ms), if any. */
  oldestPendingAt: number | null;
}

export interface MetricsSources {
  queueStats?: () => Promise<QueueStats>;
  poolStats?: () => { total: number; idle: number; waiting: number } | undefined;
  now: () => number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly httpDuration: IndexedHistogram;
  private readonly tasksFinished: IndexedCounter;
  private readonly taskDuration: IndexedHistogram;
  private readonly llmCalls: IndexedCounter;
  private readonly llmDuration: IndexedHistogram;
  private readonly llmTokens: IndexedCounter;
  private readonly toolCalls: IndexedCounter;
  private readonly toolDuration: IndexedHistogram;
  private readonly webhookCalls: IndexedCounter;
  private readonly tasksExpiredTotal: Counter;
  private readonly runsTimedOutTotal: Counter;
  private readonly duplicateEventsTotal: Counter;
  private readonly fileBlobDeletesFailedTotal: Counter;
  private readonly filesOrphanedTotal: Counter;

  constructor(private readonly sources: MetricsSources) {
    const r = this.registry;
    collectDefaultMetrics({ register: r, prefix: 'agentry_' });
    // Updated on every request: see indexed-series.ts.
    this.httpDuration = new IndexedHistogram({
      name: 'agentry_http_request_duration_seconds',
      help: 'HTTP requests by listener, method, route pattern and status: count (rate) and latency',
      labelNames: ['listener', 'method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [r],
    });
    // Updated on every run: see indexed-series.ts.
    this.tasksFinished = new IndexedCounter({ name: 'agentry_tasks_finished_total', help: 'Task runs ended, by agent and status', labelNames: ['agent_id', 'status'], registers: [r] });
    this.taskDuration = new IndexedHistogram({ name: 'agentry_task_run_duration_seconds', help: 'Task run duration by status', labelNames: ['status'], buckets: LATENCY_BUCKETS, registers: [r] });
    this.llmCalls = new IndexedCounter({ name: 'agentry_llm_calls_total', help: 'LLM calls by provider, model and outcome (ok, error)', labelNames: ['provider', 'model', 'outcome'], registers: [r] });
    this.llmDuration = new IndexedHistogram({ name: 'agentry_llm_call_duration_seconds', help: 'LLM call latency by provider and model', labelNames: ['provider', 'model'], buckets: LATENCY_BUCKETS, registers: [r] });
    this.llmTokens = new IndexedCounter({ name: 'agentry_llm_tokens_total', help: 'LLM tokens by provider, model and type (input, output)', labelNames: ['provider', 'model', 'type'], registers: [r] });
    this.toolCalls = new IndexedCounter({ name: 'agentry_tool_calls_total', help: 'Tool calls by outcome (ok, error)', labelNames: ['outcome'], registers: [r] });
    this.toolDuration = new IndexedHistogram({ name: 'agentry_tool_call_duration_seconds', help: 'Tool call duration by outcome', labelNames: ['outcome'], buckets: LATENCY_BUCKETS, registers: [r] });
    this.webhookCalls = new IndexedCounter({ name: 'agentry_webhook_calls_total', help: 'Webhook invocations received, by form (public, key) and status', labelNames: ['form', 'status'], registers: [r] });
    // Unlabelled and off the request path (a few increments per sweep): prom-client's own counter.
    this.runsTimedOutTotal = new Counter({ name: 'agentry_runs_timed_out_total', help: 'Runs stopped by their deadline (AGENTRY_RUN_TIMEOUT_MS); their tasks end in error', registers: [r] });
    this.duplicateEventsTotal = new Counter({
      name: 'agentry_duplicate_events_total',
      help: "Invocations answered with an earlier event's task instead of starting one (task_level_strategies.duplication_prevention)",
      registers: [r],
    });
    this.tasksExpiredTotal = new Counter({ name: 'agentry_tasks_expired_total', help: 'Finished tasks deleted by the retention sweep (AGENTRY_TASK_RETENTION_DAYS)', registers: [r] });
    this.fileBlobDeletesFailedTotal = new Counter({
      name: 'agentry_file_blob_deletes_failed_total',
      help: 'Blobs of deleted files the blob store would not delete (recorded; the file sweep retries them)',
      registers: [r],
    });
    this.filesOrphanedTotal = new Counter({ name: 'agentry_files_orphaned_total', help: 'Uploads deleted by the file sweep because no task holds them', registers: [r] });

    const { queueStats, poolStats } = sources;
    if (queueStats) {
      // One query per scrape feeds the three queue gauges: the first gauge's collect runs it, the others reuse it.
      // prom-client collects every metric at once, so the three collects share the query in flight. A failed query
      // (database down) leaves these gauges unknown for that scrape (no series, or NaN); the other metrics answer.
      let pending: Promise<QueueStats | null> | undefined;
      const stats = () =>
        (pending ??= queueStats()
          .catch(() => null)
          .finally(() => (pending = undefined)));
      new Gauge({
        name: 'agentry_tasks',
        help: 'Tasks not finished, by status (pending, executing, paused)',
        labelNames: ['status'],
        registers: [r],
        async collect() {
          const s = await stats();
          if (!s) return this.reset();
          for (const status of ['pending', 'executing', 'paused']) this.set({ status }, s.byStatus[status] ?? 0);
        },
      });
      new Gauge({
        name: 'agentry_task_inbox_depth',
        help: 'Webhook tasks committed and not yet moved into the task queue',
        registers: [r],
        async collect() {
          const s = await stats();
          this.set(s ? s.inbox : NaN);
        },
      });
      const now = sources.now;
      new Gauge({
        name: 'agentry_task_queue_oldest_age_seconds',
        help: 'Age of the oldest pending task (0 when none)',
        registers: [r],
        async collect() {
          const s = await stats();
          if (!s) return this.set(NaN);
          this.set(s.oldestPendingAt === null ? 0 : Math.max(0, (now() - s.oldestPendingAt) / 1000));
        },
      });
    }
    if (poolStats) {
      new Gauge({
        name: 'agentry_db_pool_connections',
        help: 'PostgreSQL pool connections by state (total, idle, waiting: queries waiting for a connection)',
        labelNames: ['state'],
        registers: [r],
        collect() {
          const p = poolStats();
          if (!p) return;
          this.set({ state: 'total' }, p.total);
          this.set({ state: 'idle' }, p.idle);
          this.set({ state: 'waiting' }, p.waiting);
        },
      });
    }
  }

  httpRequest(listener: 'api' | 'webhooks', method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe([listener, method, route, status], seconds);
  }

  webhookCall(form: 'public' | 'key', status: number): void {
    this.webhookCalls.inc([form, status]);
  }

  /** `httpRequest` and `webhookCall` of one webhook route and status, bound once (the lane's accepted calls). */
  webhookSeries(form: 'public' | 'key', route: string, status: number): (seconds: number) => void {
    const duration = this.httpDuration.bind(['webhooks', 'POST', route, status]);
    const calls = this.webhookCalls.bind([form, status]);
    return (seconds) => {
      duration(seconds);
      calls();
    };
  }

  taskFinished(agentId: string, status: string, seconds: number): void {
    this.tasksFinished.inc([agentId, status]);
    this.taskDuration.observe([status], seconds);
  }

  /** Runs stopped by their deadline in this process. */
  runTimedOut(): void {
    this.runsTimedOutTotal.inc();
  }

  /** Invocations answered with an earlier event's task (duplication_prevention). */
  duplicateEvent(): void {
    this.duplicateEventsTotal.inc();
  }

  /** Tasks the retention sweep of this process deleted. */
  tasksExpired(count: number): void {
    this.tasksExpiredTotal.inc(count);
  }

  /** Blob deletions that failed in this process (after a task delete, a discard, or a sweep's retry). */
  fileBlobDeletesFailed(count: number): void {
    this.fileBlobDeletesFailedTotal.inc(count);
  }

  /** Orphan uploads this process's file sweep deleted. */
  filesOrphaned(count: number): void {
    this.filesOrphanedTotal.inc(count);
  }

  llmCall(provider: string, model: string, seconds: number, inputTokens: number, outputTokens: number, failed: boolean): void {
    this.llmCalls.inc([provider, model, failed ? 'error' : 'ok']);
    this.llmDuration.observe([provider, model], seconds);
    if (inputTokens > 0) this.llmTokens.inc([provider, model, 'input'], inputTokens);
    if (outputTokens > 0) this.llmTokens.inc([provider, model, 'output'], outputTokens);
  }

  toolCall(failed: boolean, seconds: number): void {
    const outcome = failed ? 'error' : 'ok';
    this.toolCalls.inc([outcome]);
    this.toolDuration.observe([outcome], seconds);
  }

  /**
   * This process's worker, read at scrape time: the organizations whose new tasks it does not start because they
   * have AGENTRY_MAX_PAUSED_RUNS_PER_ORG runs paused for approval in it (src/tasks/slot-ledger.ts, heldBack).
   */
  observeWorker(worker: { readonly heldBackOrganizations: number }): void {
    new Gauge({
      name: 'agentry_worker_organizations_held_back',
      help: 'Organizations whose new tasks this worker does not start: they have AGENTRY_MAX_PAUSED_RUNS_PER_ORG runs paused for approval in it',
      registers: [this.registry],
      collect() {
        this.set(worker.heldBackOrganizations);
      },
    });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
