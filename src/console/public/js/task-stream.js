import { api, ApiError, path, streamEvents } from './api.js';

const RECONNECT_MS = 1500;
const FALLBACK_POLL_MS = 3000;

/**
 * Follows a task's trace: the SSE stream replays every event and then follows the live task. A dropped stream is
 * reopened (events already seen are skipped by the caller's sequence ids); when streaming is impossible (a proxy
 * that buffers, an old server) it falls back to polling the JSON trace. Ends when `isDone()` or the signal aborts.
 *
 * @param {string} taskId
 * @param {{ onEvent(envelope: object, id: string|null): void, isDone(): boolean, onState?(state: 'live'|'polling'|'ended'|'error', error?): void, signal: AbortSignal }} opts
 */
export async function followTask(taskId, { onEvent, isDone, onState = () => {}, signal }) {
  const url = path`/v1/tasks/${taskId}/events`;
  let lastId = null;
  let failures = 0;
  while (!signal.aborted) {
    try {
      onState('live');
      lastId =
        (await streamEvents(url, {
          signal,
          lastEventId: lastId,
          onEvent: (e) => {
            const envelope = parse(e.data);
            // The trace's sequence number identifies an event in both the stream and the JSON trace.
            if (envelope) onEvent(envelope, envelope.seq ?? e.id ?? null);
          },
        })) ?? lastId;
      failures = 0;
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && (e.status === 404 || e.status === 401 || e.status === 403)) {
        onState('error', e);
        return;
      }
      if (++failures >= 3) return pollTrace(url, { onEvent, isDone, onState, signal });
    }
    if (isDone()) {
      onState('ended');
      return;
    }
    await sleep(RECONNECT_MS, signal);
  }
}

/** The JSON trace, re-read until the task is final: events carry their seq, so repeats are skipped. */
async function pollTrace(url, { onEvent, isDone, onState, signal }) {
  onState('polling');
  while (!signal.aborted) {
    try {
      const events = await api('GET', url, { signal });
      for (const ev of events) onEvent(ev, ev.seq ?? null);
      if (isDone()) {
        onState('ended');
        return;
      }
    } catch (e) {
      if (signal.aborted) return;
      onState('error', e);
    }
    await sleep(FALLBACK_POLL_MS, signal);
  }
}

function parse(data) {
  try {
    const v = JSON.parse(data);
    return v && typeof v === 'object' && typeof v.type === 'string' ? v : null;
  } catch {
    return null;
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}
