import { GuardrailRefusal } from '../guardrails/guardrail.types.js';
import type { GuardrailService } from '../guardrails/guardrails.service.js';
import { deadlineSignal } from '../lib/abort.js';
import type { Startable } from '../lib/lifecycle.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { LlmService } from '../llm/llm.service.js';
import type { RunObserver } from '../runtime/run-hooks.js';
import { sideCall } from '../runtime/side-call.js';
import type { RunOutcome, RunRequest } from '../runtime/task-runner.js';
import type { TaskEventType } from '../tasks/task.types.js';
import { taskUserId } from './memory-context.js';
import { memorySettings } from './memory-settings.js';
import type { MemoryChanges, MemoryService } from './memory.service.js';

/**
 * user_memories / agent_memories: after a completed task, the agent's own model reads the run's exchange and the
 * memories it already has, and says what to add, update or delete. Off the task's critical path: the run's outcome
 * is recorded and answered without waiting; extractions wait in a bounded queue and run a few at a time. Each
 * extraction's changes are written in one transaction (a crash loses at most the extractions still queued, never
 * half of one), and one `llm_call` event with purpose `memory_extraction` goes into the task's trace.
 */

export const EXTRACTION_LIMITS = { queued: 500, concurrent: 2, exchangeChars: 12_000, timeoutMs: 60_000 };

export const EXTRACTION_SYSTEM = `You maintain the long-term memory of an AI agent. From the exchange below, decide which durable facts to remember.
Remember only facts likely to matter in later conversations: preferences, personal details the user shared, decisions, recurring needs.
Do not remember the task itself, small talk, or anything already remembered. Update a memory that changed; delete one the exchange shows is wrong or the user asked to forget.
Answer with one JSON object and nothing else:
{"user": {"add": ["..."], "update": [{"id": "...", "content": "..."}], "delete": ["id"]}, "agent": {"add": [], "update": [], "delete": []}}
"user": facts about this user. "agent": lessons that hold for every user of the agent. Each memory is one short sentence.`;

export interface TracePort {
  append(organizationId: string, taskId: string, type: TaskEventType, data: Record<string, unknown>): Promise<void>;
}

interface Job {
  req: RunRequest;
  outcome: RunOutcome;
}

export class MemoryExtractor implements RunObserver, Startable {
  private readonly queue: Job[] = [];
  private running = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly deps: {
      memories: MemoryService;
      llm: Pick<LlmService, 'resolve'>;
      /** The agent's guards: the exchange goes to the model screened as the run's own text did (PII, injection). */
      guardrails: Pick<GuardrailService, 'forRun'>;
      trace: TracePort;
      clock: Clock;
      log: Logger;
    },
  ) {}

  finished(req: RunRequest, outcome: RunOutcome): void {
    if (outcome.status !== 'completed' || this.stopping.signal.aborted) return;
    const s = memorySettings(req.agent);
    if (!(s.agentMemories || (s.userMemories && taskUserId(req.task)))) return;
    if (this.queue.length >= EXTRACTION_LIMITS.queued) {
      this.deps.log.warn({ task_id: req.task.id }, 'memory extraction queue full; this task is not remembered');
      return;
    }
    this.queue.push({ req, outcome });
    this.pump();
  }

  async start(): Promise<void> {}

  /** Drops what is queued and waits (bounded) for the extractions under way. */
  async stop(): Promise<void> {
    this.queue.length = 0;
    const settled = (ms: number) => Promise.race([Promise.all([...this.inFlight]), new Promise((r) => setTimeout(r, ms).unref())]);
    await settled(5000);
    // Whatever is still calling the model is cancelled, and given a moment to end before the database closes.
    this.stopping.abort(new Error('shutting down'));
    await settled(1000);
  }

  /** Resolves when nothing is queued or under way (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  private pump(): void {
    while (this.running < EXTRACTION_LIMITS.concurrent && this.queue.length) {
      const job = this.queue.shift()!;
      this.running++;
      const p: Promise<void> = this.extract(job)
        .catch((err) => this.deps.log.warn({ err, task_id: job.req.task.id }, 'memory extraction failed'))
        .finally(() => {
          this.running--;
          this.inFlight.delete(p);
          this.pump();
        });
      this.inFlight.add(p);
    }
  }

  private async extract(job: Job): Promise<void> {
    // Released when the extraction ends: the shutdown signal lives as long as the service and would gather a listener
    // per extraction.
    const deadline = deadlineSignal(this.stopping.signal, EXTRACTION_LIMITS.timeoutMs);
    try {
      await this.extractWithin(job, deadline.signal);
    } finally {
      deadline.release();
    }
  }

  private async extractWithin({ req, outcome }: Job, signal: AbortSignal): Promise<void> {
    const { task, agent } = req;
    const org = task.organization_id;
    const s = memorySettings(agent);
    const userId = s.userMemories ? taskUserId(task) : null;
    const started = this.deps.clock.now();
    const resolved = await this.deps.llm.resolve(agent);
    const query = task.input.text ?? '';
    const known = await this.deps.memories.recall(org, agent.id, userId, query, { user: userId !== null, shared: s.agentMemories });
    const base = { purpose: 'memory_extraction', provider: resolved.provider, model: resolved.modelName };
    const guard = this.deps.guardrails.forRun({
      agent,
      signal,
      report: (e) => this.deps.trace.append(org, task.id, 'guardrail', { ...e, purpose: 'memory_extraction' }),
    });
    let prompt = promptOf(known, exchangeOf(outcome), userId !== null, s.agentMemories);
    if (guard.active) {
      try {
        // The memories it answers are stored with the real values (restored below) and screened again when recalled.
        prompt = await guard.screen(prompt, { origin: 'history' });
      } catch (err) {
        // With pii_detection_mask false, personal data must not reach the model: this exchange is not remembered.
        if (err instanceof GuardrailRefusal) return;
        throw err;
      }
    }
    let text: string;
    let tokens;
    try {
      const r = await sideCall({
        model: resolved.model,
        provider: resolved.provider,
        modelName: resolved.modelName,
        providerOptions: resolved.providerOptions,
        system: EXTRACTION_SYSTEM,
        prompt,
        signal,
      });
      text = r.text;
      tokens = r.tokens;
    } catch (err) {
      if (!this.stopping.signal.aborted) {
        await this.deps.trace.append(org, task.id, 'llm_call', { ...base, latency_ms: this.deps.clock.now() - started, error: (err as Error).message });
      }
      throw err;
    }
    const parsed = guard.restoreDeep(parseChanges(text));
    const batches = [
      ...(userId && parsed.user ? [{ userId, changes: parsed.user }] : []),
      ...(s.agentMemories && parsed.agent ? [{ userId: null, changes: parsed.agent }] : []),
    ];
    const applied = await this.deps.memories.applyAll(org, agent.id, batches, 'extracted', task.id);
    const result: Record<string, unknown> = {};
    batches.forEach((b, i) => (result[b.userId === null ? 'agent' : 'user'] = applied[i]));
    await this.deps.trace.append(org, task.id, 'llm_call', {
      ...base,
      latency_ms: this.deps.clock.now() - started,
      tokens,
      ...(parsed.invalid ? { error: 'the model did not answer with the expected JSON; nothing was changed' } : {}),
      changes: result,
    });
  }
}

function exchangeOf(outcome: RunOutcome): string {
  const lines = outcome.messages
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content.trim())
    .map((m) => `${m.role === 'user' ? 'User' : 'Agent'}: ${m.content.trim()}`);
  const text = lines.join('\n');
  return text.length > EXTRACTION_LIMITS.exchangeChars ? `${text.slice(0, EXTRACTION_LIMITS.exchangeChars)}\n[...]` : text;
}

function promptOf(known: { id: string; userId: string | null; content: string }[], exchange: string, user: boolean, agent: boolean): string {
  const list = (xs: typeof known) => (xs.length ? xs.map((m) => `- [${m.id}] ${m.content}`).join('\n') : '(none)');
  const parts = [];
  if (user) parts.push(`Memories about this user:\n${list(known.filter((m) => m.userId !== null))}`);
  else parts.push('Keep nothing about this user: leave "user" empty.');
  if (agent) parts.push(`Memories for every user:\n${list(known.filter((m) => m.userId === null))}`);
  else parts.push('Leave "agent" empty.');
  parts.push(`Exchange:\n${exchange}`);
  return parts.join('\n\n');
}

/** The model's JSON, leniently read (a code fence around it is tolerated); anything else changes nothing. */
export function parseChanges(text: string): { user?: MemoryChanges; agent?: MemoryChanges; invalid?: boolean } {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return { invalid: true };
  let v: unknown;
  try {
    v = JSON.parse(text.slice(start, end + 1));
  } catch {
    return { invalid: true };
  }
  if (!v || typeof v !== 'object') return { invalid: true };
  const o = v as Record<string, unknown>;
  return { user: changesOf(o.user), agent: changesOf(o.agent) };
}

function changesOf(v: unknown): MemoryChanges | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  const arr = (x: unknown) => (Array.isArray(x) ? x.slice(0, 50) : []);
  return {
    add: arr(o.add).filter((s): s is string => typeof s === 'string'),
    update: arr(o.update)
      .filter((u): u is { id: string; content: string } => !!u && typeof u === 'object' && typeof (u as any).id === 'string' && typeof (u as any).content === 'string')
      .map((u) => ({ id: u.id, content: u.content })),
    delete: arr(o.delete).filter((s): s is string => typeof s === 'string'),
  };
}
