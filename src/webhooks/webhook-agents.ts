/**
 * What the webhook receiver needs from the agents domain, as a narrow port: the container adapts the agents
 * service to it, so the receiver never depends on how agents are stored.
 */
import type { SubmittableAgent } from '../tasks/task-agents.js';

/** The agent's current published version as a submission needs it, plus what the receiver checks itself. */
export interface WebhookAgent extends SubmittableAgent {
  /** `ACTIVE` or `INACTIVE`. */
  status: string;
  /** When false, both webhook forms are refused (spec 5 rule 5). */
  developerAccess: boolean;
}

export interface WebhookAgentDirectory {
  /** undefined when the agent does not exist in the organization (or was deleted). */
  find(organizationId: string, agentId: string): Promise<WebhookAgent | undefined>;
  /** `find` answered from memory, when it can be (a busy URL's agent); undefined means "ask find". */
  findCached(organizationId: string, agentId: string): WebhookAgent | undefined;
}
