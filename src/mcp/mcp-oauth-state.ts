import type { SecretBox } from '../lib/secret-box.js';

/**
 * The OAuth `state` of an authorization link: everything the callback needs, sealed (AES-256-GCM under the master
 * key), so the callback, which no API key reaches (the user's browser calls it), trusts only what this service
 * wrote. Altering one byte makes it unreadable; it names its organization, server, user and client and expires.
 * The PKCE verifier travels inside it, encrypted: no server-side record to keep or clean up.
 */

export interface McpOAuthState {
  organizationId: string;
  serverId: string;
  userId: string;
  /** The agent whose run asked: the token is its own when the server does not share tokens across agents. */
  agentId: string;
  /** The client_id the link was made for: a changed client_id makes older links void. */
  clientId: string;
  codeVerifier: string;
  redirectUri: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** Distinguishes these from every other sealed value, so no other sealed string can pass as a state. */
const PURPOSE = 'mcp_oauth_state.v1';

export function sealState(box: SecretBox, s: McpOAuthState): string {
  return box.sealJson({ p: PURPOSE, o: s.organizationId, s: s.serverId, u: s.userId, a: s.agentId, c: s.clientId, v: s.codeVerifier, r: s.redirectUri, e: s.expiresAt });
}

/** The state, or a reason it is refused (unreadable, altered, not a state, expired). */
export function openState(box: SecretBox, sealed: string, now: number): { state: McpOAuthState } | { refused: string } {
  let raw: Record<string, unknown>;
  try {
    raw = box.openJson<Record<string, unknown>>(sealed);
  } catch {
    return { refused: 'the state parameter is not one this service issued (altered or unreadable)' };
  }
  const str = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : '');
  if (raw?.p !== PURPOSE || typeof raw.e !== 'number' || !str('o') || !str('s') || !str('u') || !str('v')) {
    return { refused: 'the state parameter is not an MCP authorization state' };
  }
  if (raw.e <= now) return { refused: 'the authorization link expired: ask the agent again for a new one' };
  return {
    state: { organizationId: str('o'), serverId: str('s'), userId: str('u'), agentId: str('a'), clientId: str('c'), codeVerifier: str('v'), redirectUri: str('r'), expiresAt: raw.e },
  };
}
