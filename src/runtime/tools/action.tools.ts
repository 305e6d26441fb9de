import type { Awaitable } from '../../lib/awaitable.js';
import { AppError } from '../../errors.js';
import type { InvokeResult, InvokeTarget } from '../../connectors/invoke/operation-invoker.js';
import type { InvokePayload } from '../../connectors/invoke/request-builder.js';
import type { OperationSchema } from '../../connectors/openapi/operation-schema.js';
import { providerSafeToolName, schemaDialectFor, toProviderSafeSchema } from '../../tools/provider-safe-schema.js';
import { ToolArgumentsError, type RunContextAgent, type RuntimeTool, type RuntimeToolProvider, type ToolCallContext } from '../../tools/tool-kinds.js';

/** What the action tools need from the connectors domain. */
export interface ActionRuntime {
  findConnection(organizationId: string, connectionId: string): Promise<{ id: string; connectorId: string } | undefined>;
  /** The operation's schema and texts; throws AppError not_found when the operation is gone. */
  describeOperation(organizationId: string, connectorId: string, operationId: string): Promise<DescribedOperation>;
  invoke(target: InvokeTarget, payload: InvokePayload, signal?: AbortSignal): Promise<InvokeResult>;
}

export interface DescribedOperation {
  schema: OperationSchema;
  summary: string | null;
  description: string | null;
}

const CUSTOM_FUNCTION_CONNECTORS: ReadonlySet<string> = new Set(['service-custom-functions', 'xpander-custom-functions']);
const READ_ONLY_METHODS: ReadonlySet<string> = new Set(['get', 'head', 'options']);
const MAX_DESCRIPTION = 1000;

/**
 * The agent's attached connector operations (attached_tools entries other than the custom-function connector)
 * become LLM tools: arguments are the operation's `input` (query_params, path_params, body_params, ...) in the
 * dialect of the agent's model provider, and a call invokes the operation through its connection.
 */
export class ActionToolProvider implements RuntimeToolProvider {
  constructor(private readonly connectors: ActionRuntime) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    if (!agent.attached_tools.some((a) => !CUSTOM_FUNCTION_CONNECTORS.has(a.id))) return [];
    return this.toolsFor(agent, ctx);
  }

  private async toolsFor(agent: RunContextAgent, ctx: ToolCallContext): Promise<RuntimeTool[]> {
    const dialect = schemaDialectFor(agent.model_provider);
    const graphIds = new Map<string, string>();
    for (const g of agent.graph) if (g.type === 'tool' && !g.sub_type && g.item_id) graphIds.set(g.item_id, g.id ?? g.item_id);
    const taken = new Set<string>();
    const tools: RuntimeTool[] = [];
    for (const attached of agent.attached_tools) {
      if (CUSTOM_FUNCTION_CONNECTORS.has(attached.id)) continue;
      // A connection or operation removed after it was attached is simply not offered.
      const conn = await this.connectors.findConnection(ctx.organizationId, attached.id);
      if (!conn) continue;
      for (const opId of attached.operation_ids ?? []) {
        const op = await this.connectors.describeOperation(ctx.organizationId, conn.connectorId, opId).catch((e: unknown) => {
          if (e instanceof AppError && e.code === 'not_found') return undefined;
          throw e;
        });
        if (!op) continue;
        tools.push(this.tool(conn, op, dialect, taken, graphIds.get(op.schema.operationId)));
      }
    }
    return tools;
  }

  private tool(
    conn: { id: string; connectorId: string },
    { schema, summary, description }: DescribedOperation,
    dialect: ReturnType<typeof schemaDialectFor>,
    taken: Set<string>,
    graphItemId: string | undefined,
  ): RuntimeTool {
    const line = `${schema.method.toUpperCase()} ${schema.path}`;
    const text = [summary, description].filter((s): s is string => !!s && s.trim() !== '').join('\n\n');
    return {
      name: providerSafeToolName(schema.operationId, taken, `operation_${schema.id.slice(0, 8)}`),
      description: (text ? `${text}\n\n(${line})` : line).slice(0, MAX_DESCRIPTION),
      inputSchema: toProviderSafeSchema(schema.input, dialect),
      mutating: !READ_ONLY_METHODS.has(schema.method.toLowerCase()),
      graphItemId,
      // The upstream's error answer is given to the model (it may act on a 404); for stop_on_failure it is a failure.
      failed: (result) => ((result as { status_code?: number } | undefined)?.status_code ?? 0) >= 400,
      execute: async (args, callCtx) => {
        try {
          const r = await this.connectors.invoke(
            { organizationId: callCtx.organizationId, connectorId: conn.connectorId, connectionId: conn.id, operationId: schema.id },
            args as InvokePayload,
            callCtx.signal,
          );
          return { status_code: r.status_code, result: r.result };
        } catch (e) {
          // Validation problems go back to the model in words it can act on.
          if (e instanceof AppError && e.issues?.length) {
            throw new ToolArgumentsError(`Invalid arguments: ${e.issues.map((i) => `${i.loc.slice(1).join('.')}: ${i.msg}`).join('; ')}`);
          }
          throw e;
        }
      },
    };
  }
}
