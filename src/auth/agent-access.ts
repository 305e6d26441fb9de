import { ownerOf, type Principal } from './principal.js';

/** Who may see an agent under `access_scope` (docs/access.md): stored beside the agent, mirrored from its published version. */
export interface AgentAccess {
  /** `api_key:<id>` or `jwt:<sub>` of the creator; null for agents created before owners were recorded. */
  owner: string | null;
  /** The published `access_scope` is `personal`. */
  personal: boolean;
}

/**
 * `organizational` agents are the whole organization's; a `personal` one is its owner's, and every admin's: an admin
 * can make it organizational with a PATCH anyway, and must be able to see and delete the agents of a revoked key.
 * An agent without a recorded owner (older than owners) stays the organization's.
 */
export function canSeeAgent(viewer: Principal, access: AgentAccess | undefined): boolean {
  if (!access || !access.personal || access.owner === null || viewer.role === 'admin') return true;
  return access.owner === ownerOf(viewer);
}

/** The owner whose personal agents a list shows besides the organizational ones; undefined: every agent (an admin). */
export function listOwner(viewer: Principal): string | undefined {
  return viewer.role === 'admin' ? undefined : ownerOf(viewer);
}
