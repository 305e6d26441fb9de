import { isEgressRefused } from '../net/safe-fetch.js';
import { findCause } from '../lib/error-cause.js';

/**
 * Messages for failures talking to an MCP server. They reach the LLM and the task trace, so they say what failed
 * and why in plain words, and never include credentials or stack traces.
 */
export function describeMcpError(ep: { name: string; url: string }, e: unknown, during: string): string {
  const where = `MCP server '${ep.name}' (${origin(ep.url)})`;
  if (isEgressRefused(e)) return `${where}: ${errorMessage(e)}`;
  const egress = findCause(e, isEgressRefused);
  if (egress) return `${where}: ${errorMessage(egress)}`;
  const code = (e as { code?: unknown })?.code;
  if (code === 401 || code === 403 || /\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(errorMessage(e))) {
    return `${where} refused the credentials while ${during} (HTTP ${code === 403 ? 403 : 401}): check its api_key, headers or the user's token`;
  }
  const sys = findCause(e, (c) => typeof (c as NodeJS.ErrnoException)?.code === 'string' && /^E[A-Z]+$/.test((c as NodeJS.ErrnoException).code!));
  if (sys) {
    const reason = { ECONNREFUSED: 'connection refused', ENOTFOUND: 'host not found', ECONNRESET: 'connection reset', ETIMEDOUT: 'timed out', EHOSTUNREACH: 'host unreachable' }[
      (sys as NodeJS.ErrnoException).code!
    ];
    return `${where} is unreachable while ${during}: ${reason ?? (sys as NodeJS.ErrnoException).code}`;
  }
  if ((e as Error)?.name === 'AbortError') return `${where}: ${during} was cancelled`;
  const msg = errorMessage(e).replace(/\s+/g, ' ').slice(0, 300);
  return `${where} failed while ${during}: ${msg || 'unknown error'}`;
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid URL';
  }
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
