import { api, ApiError, path, streamEvents } from './api.js';

const RECONNECT_MS = 1500;
const FALLBACK_POLL_MS = 3000;

/**
 * Follows a task's trace. The trace is append-only and every source gives it in the same order, so an event is
 * identified by its position: the SSE stream replays from the start (or resumes after Last-Event-ID), the JSON
 * trace always starts at the start, and events at positions already delivered are skipped. A dropped stream is
 * reopened; when streaming keeps failing (a proxy that buffers, an old server) it falls back to polling the JSON
 * trace. Ends when `isDone()` after a stream ends, or when the signal aborts.
 *
 * @param {string} taskId
 * @param {{ delivered?: number, onEvent(envelope: object): void, isDone(): boolean,
 *           onState?(state: 'live'|'polling'|'ended'|'error', error?: Error): void, signal: AbortSignal }} opts
 *        `delivered`: events the caller already has (from the JSON trace).
 */
export async function followTask(taskId, { delivered = 0, onEvent, isDone, onState = () => {}, signal }) {
  const url = path`/v1/tasks/${taskId}/events`;
  let lastId = null;
  let failures = 0;
  while (!signal.aborted) {
    // Without a resume point the stream starts at position 0; with one it continues where the last one stopped.
    let position = lastId === null ? 0 : delivered;
    try {
      onState('live');
      await streamEvents(url, {
        signal,
        lastEventId: lastId,
        onEvent: (e) => {
          if (e.id) lastId = e.id;
          const envelope = parse(e.data);
          if (!envelope) return;
          if (position++ < delivered) return;
          delivered = position;
          onEvent(envelope);
        },
      });
      failures = 0;
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && (e.status === 404 || e.status === 401 || e.status === 403)) {
        onState('error', e);
        return;
      }
      if (++failures >= 3) return pollTrace(url, delivered, { onEvent, isDone, onState, signal });
    }
    if (isDone()) {
      onState('ended');
      return;
    }
    await sleep(RECONNECT_MS, signal);
  }
}

/** The JSON trace, re-read until the task is final; only events past those delivered are passed on. */
async function pollTrace(url, delivered, { onEvent, isDone, onState, signal }) {
  onState('polling');
  while (!signal.aborted) {
    try {
      const events = await api('GET', url, { signal });
      for (const ev of events.slice(delivered)) onEvent(ev);
      delivered = Math.max(delivered, events.length);
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
