import { ApiError, errorDetail, path, query, readSse, session } from './api.js';

/**
 * Starts a run with POST /v1/agents/{id}/invoke/stream and passes each event envelope ({type, time, data}) to
 * `onEvent` as it arrives, until the task is final. With files the request is multipart/form-data (the invoke
 * routes store and extract them like webhook uploads); without, it is the JSON body. `taskId` continues that
 * conversation. Rejects with ApiError on a refused request (422 detail included).
 *
 * @param {string} agentId
 * @param {{ text: string, files?: File[], taskId?: string|null, version?: string|null, signal: AbortSignal,
 *           onEvent(envelope: object): void }} opts
 */
export async function invokeStream(agentId, { text, files = [], taskId = null, version = null, signal, onEvent }) {
  const url = `${path`/v1/agents/${agentId}/invoke/stream`}${query({ version })}`;
  const headers = { accept: 'text/event-stream', 'x-api-key': session.key ?? '' };
  let body;
  if (files.length) {
    body = new FormData();
    body.set('text', text);
    if (taskId) body.set('id', taskId);
    for (const f of files) body.append('files', f, f.name);
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify({ input: { text }, ...(taskId ? { id: taskId } : {}) });
  }
  let res;
  try {
    res = await fetch(url, { method: 'POST', headers, body, signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, null);
  }
  if (!res.ok) throw new ApiError(res.status, await errorDetail(res));
  await readSse(res, (e) => {
    try {
      const v = JSON.parse(e.data);
      if (v && typeof v === 'object' && typeof v.type === 'string') onEvent(v);
    } catch {
      // not an envelope (a comment or keep-alive): nothing to show
    }
  });
}
