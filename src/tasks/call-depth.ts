import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../errors.js';

/**
 * Agents calling agents: a sub-agent tool, or an `a2a`/`curl` agent whose endpoint is an agent of this (or another
 * Agentry) service. Two agents pointing at each other, or one at itself, would otherwise call on forever and fill
 * every worker slot with tasks waiting on their children. Each task records how many calls led to it; a sub-agent's
 * task is its parent's depth + 1, and outbound calls carry the next depth in CALL_DEPTH_HEADER, which every inbound
 * entry (invoke API, webhooks, A2A, MCP) reads. A submission deeper than MAX_CALL_DEPTH is refused.
 *
 * A caller can only make its own chain stop sooner by sending the header: the value is never trusted to lower a depth.
 */
/** What an inbound protocol request (A2A, MCP) carries beside its body into the submission. */
export interface InboundCall {
  /** The end user's token for a use_oidc_pre_auth agent. */
  userToken?: string;
  /** From CALL_DEPTH_HEADER. */
  callDepth?: number;
}

export const CALL_DEPTH_HEADER = 'x-agentry-call-depth';
/**
 * Deep enough for real delegation (a manager's sub-agent calling its own); small enough that one loop ends within the
 * default 8 worker slots: each waiting caller holds a slot, so a bound above the slot count would stall the worker.
 */
export const MAX_CALL_DEPTH = 5;

/** The depth an inbound request declares; 0 without the header or with a value that is not a small whole number. */
export function callDepthOf(headers: IncomingHttpHeaders): number {
  const raw = headers[CALL_DEPTH_HEADER];
  const v = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isInteger(v) && v > 0 ? Math.min(v, MAX_CALL_DEPTH + 1) : 0;
}

/** The depth to store for a submission, or a 422 when the chain of agent calls is too long. */
export function checkedCallDepth(depth: number | undefined): number {
  const d = depth ?? 0;
  if (d > MAX_CALL_DEPTH) {
    throw AppError.invalid(['header', CALL_DEPTH_HEADER], `Agent calls nest deeper than ${MAX_CALL_DEPTH} (agents calling each other in a loop?); the call was refused`);
  }
  return d;
}
