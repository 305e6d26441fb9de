import type { AgentConfig } from '../agents/agent.schemas.js';
import { canSeeAgent } from '../auth/agent-access.js';
import { splitPreAuth, withPreAuth } from '../auth/pre-auth-token.js';
import { AppError } from '../errors.js';
import type { SubmittableAgent, TaskAgentDirectory } from './task-agents.js';
import type { TaskSubmission } from './task.types.js';

/** The port of OIDC pre-auth (src/auth/pre-auth.service.ts): verifies an invocation's end-user token for its agent. */
export interface InvocationPreAuth {
  verifyToken(agent: Readonly<AgentConfig>, token: string | undefined): Promise<{ token: string; user: NonNullable<TaskSubmission['user']> } | undefined>;
}

export interface Admitted {
  user: TaskSubmission['user'];
  userTokens: Record<string, string>;
}

/**
 * Who may start a run of the agent, and as which user (docs/access.md), checked for every submission:
 * - an API or key-form webhook caller must see the agent (`access_scope`);
 * - an agent acts for its owner: it may call another's personal agent no more than its owner may list it;
 * - an agent with `use_oidc_pre_auth` runs only with a verified end-user token (the invocation's; a sub-agent's comes
 *   from its parent run), whose claims are the user and which the run keeps for handing on. Callers cannot set the
 *   pre-auth slot of `user_tokens`. Agents without pre-auth cost one property read here.
 */
export function admitSubmission(
  s: TaskSubmission,
  agent: SubmittableAgent,
  agents: Pick<TaskAgentDirectory, 'accessOf'>,
  preAuth: InvocationPreAuth | undefined,
): Admitted | Promise<Admitted> {
  if (s.caller && !canSeeAgent(s.caller, agent.access)) throw AppError.notFound('Agent');
  if (s.parentAgentId && agent.access?.personal && agent.access.owner !== null) {
    const owner = agent.access.owner;
    return agents.accessOf(s.organizationId, s.parentAgentId).then((parent) => {
      if (parent?.owner !== owner) throw AppError.notFound('Agent');
      return admitUser(s, agent, preAuth);
    });
  }
  return admitUser(s, agent, preAuth);
}

/** The run's user and user tokens; answered at once (no promise) for an agent without pre-auth, the common case. */
function admitUser(s: TaskSubmission, agent: SubmittableAgent, preAuth: InvocationPreAuth | undefined): Admitted | Promise<Admitted> {
  const { tokens, preAuthToken: inherited } = splitPreAuth(s.userTokens);
  const carried = s.source === 'sub_agent' ? inherited : undefined;
  if (!agent.config.use_oidc_pre_auth) return { user: s.user, userTokens: withPreAuth(tokens, carried) };
  if (!preAuth) throw new AppError('unavailable', 'OIDC pre-auth is not available in this process', { retryAfter: 60 });
  return preAuth.verifyToken(agent.config, s.source === 'sub_agent' ? carried : s.userToken).then((verified) => {
    if (!verified) return { user: s.user, userTokens: tokens };
    return { user: { ...(s.user ?? {}), ...verified.user }, userTokens: withPreAuth(tokens, verified.token) };
  });
}
