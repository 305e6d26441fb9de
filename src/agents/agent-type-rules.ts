import { AppError } from '../errors.js';
import { ORCHESTRATION_KINDS } from '../tools/tool-kinds.js';

/**
 * Spec 2.2: "`manager` supports tools, sub-agents and multi-step execution. `regular` has no orchestration", and
 * orchestration is what workflows are for. So a `regular` agent has no sub-agent (`agent`) and no `workflow` tools:
 * refused on create, PATCH and attach (422), and never offered at run time to a stored row that has them
 * (`withoutOrchestration`, used by the runtime).
 */

const MSG = "type 'regular' agents have no orchestration (spec 2.2): sub-agent and workflow tools need type 'manager'";

type Loc = (string | number)[];

interface ToolParts {
  type?: string | null;
  tools?: readonly { type: string }[];
  graph?: readonly { type: string }[];
}

/**
 * `request`: the fields of this request (named in the 422 when they carry the tool); `result`: the configuration
 * the request leads to (a stored sub-agent tool on an agent PATCHed to `regular` is named through `type`).
 */
export function refuseOrchestrationOnRegular(request: ToolParts, result: ToolParts, loc: Loc = ['body']): void {
  if (result.type !== 'regular') return;
  for (const [field, list] of [['tools', request.tools], ['graph', request.graph]] as const) {
    const i = (list ?? []).findIndex((e) => ORCHESTRATION_KINDS.has(e.type));
    if (i >= 0) throw AppError.invalid([...loc, field, i, 'type'], MSG);
  }
  const stored = [...(result.tools ?? []), ...(result.graph ?? [])].some((e) => ORCHESTRATION_KINDS.has(e.type));
  if (stored) throw AppError.invalid([...loc, 'type'], `${MSG}; remove the agent's sub-agent and workflow tools first`);
}

/** Types whose runs are not Agentry's model loop (a remote agent, a workflow's steps): a tool would never be offered. */
const NO_TOOLS_TYPES: ReadonlySet<string> = new Set(['a2a', 'curl', 'orchestration']);

/** One `tools` entry attached to an existing agent (POST /v1/agents/{id}/tools): the body is the entry. */
export function refuseOrchestrationEntry(agentType: unknown, entry: { type: string }): void {
  if (agentType === 'regular' && ORCHESTRATION_KINDS.has(entry.type)) throw AppError.invalid(['body', 'type'], MSG);
  if (typeof agentType === 'string' && NO_TOOLS_TYPES.has(agentType)) {
    throw AppError.invalid(['body', 'type'], `an agent of type '${agentType}' does not run Agentry's model loop: a tool attached to it would never be offered`);
  }
}
