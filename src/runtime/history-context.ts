import type { AgentConfig } from '../agents/agent.schemas.js';
import type { ModelMessage } from 'ai';
import type { RunGuard } from '../guardrails/run-guard.js';
import type { Logger } from '../lib/logger.js';
import type { TaskTokens } from '../tasks/task.types.js';
import { runsOf } from './history.js';
import { historyRuns } from './run-settings.js';
import type { SessionSummaryStore } from './run-hooks.js';
import { sideCall, type SideCallInput } from './side-call.js';
import type { RunRequest, ThreadMessage } from './task-runner.js';

/**
 * The earlier runs of a thread as the model receives them (agno_settings, spec 2.5):
 * - the last `num_history_runs` runs, as user messages and the agent's answers (history.ts);
 * - `session_summaries`: the runs before those are not dropped but summarised; the summary (kept per task, extended
 *   as the thread grows) goes into the system prompt in their place;
 * - `max_tool_calls_from_history` > 0: the last N tool calls of the replayed runs, with their (truncated) results,
 *   are replayed as text before the answer they led to. As text, not as tool messages: the tools of that run may
 *   be gone, and providers refuse tool history whose tools are not declared.
 */

export const SUMMARY_LIMITS = { transcriptChars: 24_000, summaryChars: 4_000 };
const REPLAYED_RESULT_CHARS = 2_000;

export const SUMMARY_SYSTEM =
  'You maintain the running summary of a conversation between a user and an AI agent. Write a concise summary of ' +
  'the facts, decisions, open questions and user preferences the agent needs to continue the conversation. Plain ' +
  'text, at most 300 words, no preamble.';

export interface HistorySettings {
  numHistoryRuns: number;
  sessionSummaries: boolean;
  maxToolCallsFromHistory: number;
}

export function historySettings(agent: Pick<AgentConfig, 'agno_settings'>, numHistoryRuns: number): HistorySettings {
  const a = agent.agno_settings;
  return {
    numHistoryRuns,
    // session_storage false keeps every earlier run from the model, summarised or not.
    sessionSummaries: a.session_summaries && a.session_storage,
    maxToolCallsFromHistory: a.max_tool_calls_from_history,
  };
}

/**
 * How many of a thread's latest runs a run of this agent reads: `num_history_runs` (0 when `session_storage` is off),
 * or, when session summaries are on, `summarised` with the runs replayed: which older runs are read then depends on
 * the stored summary (summaryReadFrom). The worker loads no more than this, so a long-lived thread does not make
 * every run read its whole past.
 */
export function historyHorizon(agent: Pick<AgentConfig, 'agno_settings' | 'task_level_strategies'>): number | { summarised: number } {
  const settings = historySettings(agent, historyRuns(agent));
  const replayed = Math.max(0, settings.numHistoryRuns);
  return settings.sessionSummaries ? { summarised: replayed } : replayed;
}

/**
 * With session summaries on, the first run that run `run` reads when the stored summary covers the runs up to
 * `coveredRun` (undefined: no summary yet, every run is read). buildHistoryContext needs the replayed runs, the older
 * runs the summary lacks, and one older run at least (it stands for the runs before it, which the stored summary
 * covers, and names the last run the summary must cover). So: the last covered run, or the run just before the
 * replayed ones when the summary covers more. Reading from there gives the same prompt as reading every run, at a
 * cost that does not grow with the thread: once summarised, the older runs are read again only when the summary
 * falls behind. Runs are numbered without gaps; `enough` tells whether a read found the runs it counted on.
 */
export function summaryReadFrom(run: number, replayed: number, coveredRun: number | undefined): { from: number | undefined; enough: (runsRead: number) => boolean } {
  if (!coveredRun || coveredRun < 1) return { from: undefined, enough: () => true };
  const from = Math.max(1, Math.min(coveredRun, run - replayed - 1));
  // A thread with a run that left no messages has fewer runs than numbers: then every run is read, as before.
  return { from, enough: (runsRead) => from <= 1 || runsRead >= replayed + 1 };
}

export interface HistoryContextInput {
  req: Pick<RunRequest, 'task' | 'history' | 'emit' | 'signal'>;
  settings: HistorySettings;
  store: SessionSummaryStore | undefined;
  /** The agent's model, for the summary. */
  call: Omit<SideCallInput, 'system' | 'prompt' | 'signal'>;
  now: () => number;
  log: Logger;
  /**
   * The run's guards: the summary's transcript (and the summary so far) go to the model screened like the replayed
   * turns, and the placeholders the model writes are put back before the summary is stored (it is screened again
   * whenever a later run sends it).
   */
  guard?: Pick<RunGuard, 'active' | 'screen' | 'restore'>;
}

export interface HistoryContext {
  messages: ModelMessage[];
  /** The summary of the runs before `messages`, for the system prompt. */
  summary: string | null;
  tokens: TaskTokens;
}

export async function buildHistoryContext(input: HistoryContextInput): Promise<HistoryContext> {
  const { settings, req } = input;
  const none: TaskTokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  if (settings.numHistoryRuns <= 0 && !settings.sessionSummaries) return { messages: [], summary: null, tokens: none };
  const runs = runsOf(req.history);
  const keep = Math.max(0, settings.numHistoryRuns);
  const kept = keep > 0 ? runs.slice(-keep) : [];
  const older = runs.slice(0, runs.length - kept.length);
  const messages = toModelMessages(kept.flat(), settings.maxToolCallsFromHistory);
  if (!settings.sessionSummaries || older.length === 0) return { messages, summary: null, tokens: none };
  const { summary, tokens } = await summaryOf(input, older);
  return { messages, summary, tokens };
}

function runNumber(run: ThreadMessage[], index: number): number {
  return run.find((m) => typeof m.run === 'number')?.run ?? index + 1;
}

/** The stored summary when it covers every older run; else it is extended with the runs it lacks (one LLM call). */
async function summaryOf(input: HistoryContextInput, older: ThreadMessage[][]): Promise<{ summary: string | null; tokens: TaskTokens }> {
  const { req, store } = input;
  const none: TaskTokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const org = req.task.organization_id;
  const lastOlder = runNumber(older[older.length - 1]!, older.length - 1);
  const stored = store ? await store.get(org, req.task.id) : undefined;
  if (stored && stored.coveredRun >= lastOlder) return { summary: stored.summary, tokens: none };
  const numbered = older.map((r, i) => ({ run: runNumber(r, i), messages: r }));
  const missing = numbered.filter((r) => r.run > (stored?.coveredRun ?? 0));
  // The newest part of the transcript wins when it is too long: the stored summary already holds what came before.
  let transcript = transcriptOf(missing.flatMap((r) => r.messages));
  if (transcript.length > SUMMARY_LIMITS.transcriptChars) transcript = transcript.slice(-SUMMARY_LIMITS.transcriptChars);
  // Screened outside the try below: a refusal (personal data with pii_detection_mask false) refuses the task, as the
  // same turns would when replayed.
  const guard = input.guard?.active ? input.guard : undefined;
  const summarySoFar = stored && guard ? await guard.screen(stored.summary, { origin: 'history' }) : stored?.summary;
  if (guard) transcript = await guard.screen(transcript, { origin: 'history' });
  const prompt = `${summarySoFar !== undefined ? `Summary so far:\n${summarySoFar}\n\n` : ''}Conversation to add to the summary:\n${transcript}\n\nWrite the updated summary.`;
  const started = input.now();
  try {
    const r = await sideCall({ ...input.call, system: SUMMARY_SYSTEM, prompt, signal: req.signal });
    const summary = (guard ? guard.restore(r.text) : r.text).slice(0, SUMMARY_LIMITS.summaryChars);
    await req.emit('llm_call', {
      purpose: 'session_summary',
      provider: input.call.provider,
      model: input.call.modelName,
      latency_ms: input.now() - started,
      tokens: r.tokens,
      summarized_runs: missing.map((r) => r.run),
    });
    if (summary && store) await store.put(org, req.task.id, lastOlder, summary);
    return { summary: summary || stored?.summary || null, tokens: r.tokens };
  } catch (err) {
    req.signal.throwIfAborted();
    // A summary is an aid: without it the run goes on with the summary it had (or none), as without the setting.
    input.log.warn({ err, task_id: req.task.id }, 'session summary failed; the run continues without the newest runs summarised');
    await req.emit('llm_call', { purpose: 'session_summary', provider: input.call.provider, model: input.call.modelName, latency_ms: input.now() - started, error: (err as Error).message });
    return { summary: stored?.summary ?? null, tokens: none };
  }
}

function transcriptOf(messages: ThreadMessage[]): string {
  return messages
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content.trim())
    .map((m) => `${m.role === 'user' ? 'User' : 'Agent'}: ${m.content.trim()}`)
    .join('\n');
}

/** User messages and answers; with `maxToolCalls` the last tool calls and results before the answer they led to. */
function toModelMessages(history: ThreadMessage[], maxToolCalls: number): ModelMessage[] {
  const replayed = new Set<string>();
  if (maxToolCalls > 0) {
    const calls = history.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
    for (const c of calls.slice(-maxToolCalls)) replayed.add(c.id);
  }
  const results = new Map<string, string>();
  for (const m of history) if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m.content);
  const out: ModelMessage[] = [];
  let pending: string[] = [];
  for (const m of history) {
    if (m.role === 'assistant' && m.tool_calls?.length) {
      for (const c of m.tool_calls) {
        if (!replayed.has(c.id)) continue;
        const r = results.get(c.id) ?? '(no result recorded)';
        const shown = r.length > REPLAYED_RESULT_CHARS ? `${r.slice(0, REPLAYED_RESULT_CHARS)} [... ${r.length - REPLAYED_RESULT_CHARS} more characters]` : r;
        pending.push(`- ${c.name}(${JSON.stringify(c.arguments)}) -> ${shown}`);
      }
      // Text said along with the calls is replayed as before; the calls go before the answer they led to.
      if (!m.content.trim()) continue;
      out.push({ role: 'assistant', content: m.content });
      continue;
    }
    if (!m.content.trim()) continue;
    if (m.role === 'user') {
      pending = [];
      out.push({ role: 'user', content: m.content });
    } else if (m.role === 'assistant') {
      const calls = pending.length ? `[Tool calls made before this answer]\n${pending.join('\n')}\n[Answer]\n` : '';
      pending = [];
      out.push({ role: 'assistant', content: `${calls}${m.content}` });
    }
  }
  return out;
}
