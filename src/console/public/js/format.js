/** Pure formatting helpers (no DOM): unit-tested in Node. */

export const TASK_STATUSES = ['pending', 'executing', 'paused', 'error', 'failed', 'completed', 'stopped'];
export const FINAL_STATUSES = new Set(['error', 'failed', 'completed', 'stopped']);
export const TASK_SOURCES = ['api', 'webhook', 'sub_agent', 'schedule', 'a2a', 'mcp'];

export function isFinal(status) {
  return FINAL_STATUSES.has(status);
}

/** Milliseconds -> "850 ms", "2.4 s", "3 min 5 s", "1 h 2 min". */
export function formatDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return '—';
  const v = Math.max(0, Number(ms));
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
  const s = Math.round(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Duration between two ISO times; `end` absent means "until now" (a running task). */
export function durationBetween(startIso, endIso, now = Date.now()) {
  if (!startIso) return null;
  const start = Date.parse(startIso);
  const end = endIso ? Date.parse(endIso) : now;
  if (!Number.isFinite(start) || !Number.isFinite(end)) return null;
  return end - start;
}

/** ISO time -> the viewer's local date and time (seconds precision). */
export function formatTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function formatNumber(n) {
  if (n === null || n === undefined || !Number.isFinite(Number(n))) return '—';
  return Number(n).toLocaleString('en-US');
}

export function formatBytes(n) {
  const v = Number(n);
  if (!Number.isFinite(v)) return '—';
  if (v < 1024) return `${v} B`;
  if (v < 1024 * 1024) return `${(v / 1024).toFixed(1)} KB`;
  return `${(v / 1024 / 1024).toFixed(1)} MB`;
}

/** "1,234 (1,000 in / 234 out)" from the token fields of a task or an llm_call. */
export function formatTokens(t) {
  if (!t) return '—';
  const prompt = t.prompt_tokens ?? t.input_tokens ?? t.inputTokens;
  const completion = t.completion_tokens ?? t.output_tokens ?? t.outputTokens;
  const total = t.total_tokens ?? t.totalTokens ?? (Number(prompt ?? 0) + Number(completion ?? 0));
  if (prompt === undefined && completion === undefined && !total) return '—';
  return `${formatNumber(total)} (${formatNumber(prompt ?? 0)} in / ${formatNumber(completion ?? 0)} out)`;
}

/** Pretty JSON for display; strings that hold JSON are parsed first so they read as structure. */
export function prettyJson(value) {
  if (typeof value === 'string') {
    const parsed = tryParseJson(value);
    if (parsed.ok) return JSON.stringify(parsed.value, null, 2);
    return value;
  }
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function tryParseJson(text) {
  if (typeof text !== 'string') return { ok: false };
  const s = text.trim();
  if (!(s.startsWith('{') || s.startsWith('['))) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/** Shortens long ids for tables while the full id stays in the link and its title. */
export function shortId(id, keep = 8) {
  const s = String(id ?? '');
  return s.length > keep + 3 ? `${s.slice(0, keep)}…` : s;
}

/** Collapses whitespace and cuts a text to `max` characters for one-line summaries. */
export function truncate(text, max = 120) {
  const s = String(text ?? '').replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A yyyy-mm-dd date input value -> the ISO bound the tasks API filters on (local midnight; `to` is inclusive). */
export function dateInputToIso(value, { endOfDay = false } = {}) {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const [y, m, d] = value.split('-').map(Number);
  const date = endOfDay ? new Date(y, m - 1, d, 23, 59, 59, 999) : new Date(y, m - 1, d, 0, 0, 0, 0);
  return date.toISOString();
}
