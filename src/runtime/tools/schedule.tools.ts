import { AppError } from '../../errors.js';
import type { Schedule } from '../../schedules/schedule.presenter.js';
import { MAX_SCHEDULE_TEXT, ScheduleCreateBody } from '../../schedules/schedules.schemas.js';
import type { ScheduleAuthor } from '../../schedules/schedules.service.js';
import { MIN_INTERVAL_SECONDS } from '../../schedules/schedule-timing.js';
import type { RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';

/**
 * Self-scheduling (spec 2.1 `can_self_schedule`, `max_self_schedules`): an agent allowed to gets three tools, to
 * schedule a future run of itself with the prompt it wants then (one-off, cron or interval), to list the schedules
 * it made, and to cancel one. A schedule made here is an ordinary schedule of the agent (docs/schedules.md) whose
 * `created_by` names the task that made it; the tool calls are in that task's trace like any other.
 */

export const SCHEDULE_TOOL = 'schedule_self_run';
export const LIST_SCHEDULES_TOOL = 'list_self_schedules';
export const CANCEL_SCHEDULE_TOOL = 'cancel_self_schedule';

/** The schedules service as the tools need it. */
export interface SelfSchedulePort {
  create(orgId: string, agentId: string, body: ScheduleCreateBody, author: ScheduleAuthor, loc: (field: string) => (string | number)[]): Promise<Schedule>;
  list(orgId: string, filter: { agentId: string; createdBy: 'agent' }, page: number, perPage: number): Promise<{ items: Schedule[]; total: number }>;
  cancelSelfMade(orgId: string, agentId: string, id: string): Promise<void>;
}

export class ScheduleToolProvider implements RuntimeToolProvider {
  constructor(private readonly schedules: SelfSchedulePort) {}

  buildTools(agent: RunContextAgent): RuntimeTool[] {
    if (!agent.can_self_schedule) return [];
    const max = agent.max_self_schedules;
    return [this.scheduleTool(max), this.listTool(max), this.cancelTool()];
  }

  private scheduleTool(max: number): RuntimeTool {
    return {
      name: SCHEDULE_TOOL,
      description:
        `Schedule a future run of yourself with the prompt you want to receive then. Give exactly one of run_at (once), ` +
        `cron (recurring, with timezone) or interval_seconds (recurring). You may have at most ${max} active schedules you made.`,
      inputSchema: {
        type: 'object',
        properties: {
          prompt: { type: 'string', maxLength: MAX_SCHEDULE_TEXT, description: 'The input text of the future run.' },
          run_at: { type: 'string', description: 'One-off: an ISO 8601 date-time with offset, in the future, e.g. 2026-12-01T09:00:00+00:00.' },
          cron: { type: 'string', description: 'Recurring: five cron fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5".' },
          timezone: { type: 'string', description: 'IANA time zone of cron, e.g. Europe/Paris (default UTC).' },
          interval_seconds: { type: 'integer', minimum: MIN_INTERVAL_SECONDS, description: 'Recurring: seconds between runs.' },
          name: { type: 'string', maxLength: 200, description: 'A short label for the schedule.' },
        },
        required: ['prompt'],
        additionalProperties: false,
      },
      mutating: true,
      execute: async (args, ctx: ToolCallContext) => {
        const { prompt, ...timing } = args;
        const parsed = ScheduleCreateBody.safeParse({ ...timing, invocation: { input: { text: prompt, ...(ctx.userId ? { user: { id: ctx.userId } } : {}) } } });
        if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${argumentOf(i.path)}: ${i.message}`).join('; '));
        const s = await explain(
          this.schedules.create(ctx.organizationId, ctx.agentId, parsed.data, { type: 'agent', taskId: ctx.taskId, maxSelfSchedules: max }, (f) => (f ? [f] : [])),
        );
        return brief(s);
      },
    };
  }

  private listTool(max: number): RuntimeTool {
    return {
      name: LIST_SCHEDULES_TOOL,
      description: `List the schedules you made (at most ${max} may be active at once).`,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      mutating: false,
      execute: async (_args, ctx: ToolCallContext) => {
        // Bounded by max_self_schedules (at most 1000) among the active ones; finished ones beyond a page are old.
        const { items } = await this.schedules.list(ctx.organizationId, { agentId: ctx.agentId, createdBy: 'agent' }, 1, 50);
        return items.map(brief);
      },
    };
  }

  private cancelTool(): RuntimeTool {
    return {
      name: CANCEL_SCHEDULE_TOOL,
      description: 'Cancel (delete) one of the schedules you made, by its id.',
      inputSchema: { type: 'object', properties: { schedule_id: { type: 'string' } }, required: ['schedule_id'], additionalProperties: false },
      mutating: true,
      execute: async (args, ctx: ToolCallContext) => {
        await explain(this.schedules.cancelSelfMade(ctx.organizationId, ctx.agentId, String(args.schedule_id)));
        return { cancelled: args.schedule_id };
      },
    };
  }
}

function brief(s: Schedule): Record<string, unknown> {
  return {
    schedule_id: s.id,
    name: s.name,
    kind: s.kind,
    cron: s.cron,
    timezone: s.timezone,
    interval_seconds: s.interval_seconds,
    run_at: s.run_at,
    prompt: s.invocation.input.text,
    status: s.status,
    next_run_at: s.next_run_at,
    created_by_task_id: s.created_by.task_id,
  };
}

function argumentOf(path: PropertyKey[]): string {
  return path[0] === 'invocation' ? 'prompt' : path.map(String).join('.') || 'arguments';
}

/** A refusal of the service, phrased for the model (its 422 issues name the argument). */
async function explain<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof AppError && e.issues?.length) throw new Error(e.issues.map((i) => `${i.loc.join('.') || 'arguments'}: ${i.msg}`).join('; '));
    throw e;
  }
}
