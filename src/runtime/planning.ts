import type { AgentConfig } from '../agents/agent.schemas.js';
import type { RuntimeTool } from '../tools/tool-kinds.js';
import type { ContextSection } from './context-contributors.js';
import type { ForcedChoice, ToolGate } from './tool-gates.js';

/**
 * Deep planning (`deep_planning`, `enforce_deep_planning`, `agno_settings.max_plan_retries`; reference in
 * docs/planning-and-chaining.md). The model keeps a checklist through two tools offered only to planning agents:
 *
 * - `create_plan {goal?, steps[]}` writes the plan; called again it revises it (completed steps stay, the rest is
 *   replaced by the new steps);
 * - `update_plan {step_id, status, note?}` moves a step to in_progress, completed, failed or skipped. Moving a failed
 *   step back to work is a retry; a run has at most `max_plan_retries` of them, after which the step stays failed.
 *
 * Every change is a `plan` trace event carrying the whole plan: the console shows it, and a later attempt of the same
 * run (the worker died, the retry strategy ran it again) resumes from the last one instead of starting blank.
 * With `enforce_deep_planning` the first model call must create the plan (tool_choice) and any other tool call
 * before a plan exists is refused. An answer given while steps are still open is sent back (at most twice a run).
 */

export const PLAN_STEP_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'skipped'] as const;
export type PlanStepStatus = (typeof PLAN_STEP_STATUSES)[number];

export interface PlanStep {
  id: number;
  title: string;
  status: PlanStepStatus;
  /** Times the step was started (1 + its retries). */
  attempts: number;
  note: string | null;
}

export interface Plan {
  goal: string | null;
  steps: PlanStep[];
  retries_used: number;
  max_retries: number;
}

export interface PlanningSettings {
  enforce: boolean;
  maxRetries: number;
}

/** agno_settings.max_plan_retries' schema default (spec 2.5). */
export const DEFAULT_MAX_PLAN_RETRIES = 15;
const MAX_STEPS = 30;
const MAX_TEXT = 500;
/** How often an answer given with open steps (or, enforced, without a plan) is sent back in one run. */
const MAX_REMINDERS = 2;

/** The agent's planning settings, or undefined when it does not plan. `enforce_deep_planning` implies planning. */
export function planningSettings(agent: Pick<AgentConfig, 'deep_planning' | 'enforce_deep_planning' | 'agno_settings'>): PlanningSettings | undefined {
  const enforce = agent.enforce_deep_planning === true;
  if (agent.deep_planning !== true && !enforce) return undefined;
  return { enforce, maxRetries: agent.agno_settings.max_plan_retries };
}

/** A plan as a `plan` event stored it, when it is one (the trace is JSON written by an earlier attempt). */
export function planFromEvent(data: Record<string, unknown> | null): Plan | undefined {
  const p = data?.plan as Plan | undefined;
  if (!p || !Array.isArray(p.steps)) return undefined;
  const steps = p.steps.filter((s) => s && Number.isInteger(s.id) && typeof s.title === 'string' && PLAN_STEP_STATUSES.includes(s.status));
  return { goal: typeof p.goal === 'string' ? p.goal : null, steps, retries_used: Number(p.retries_used) || 0, max_retries: Number(p.max_retries) || 0 };
}

const MARKS: Record<PlanStepStatus, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]', failed: '[!]', skipped: '[-]' };

export function renderPlan(plan: Plan): string {
  const lines = plan.goal ? [`Goal: ${plan.goal}`] : [];
  for (const s of plan.steps) {
    const extra = [s.status.replace('_', ' '), s.attempts > 1 ? `attempt ${s.attempts}` : '', s.note ? `note: ${s.note}` : ''].filter(Boolean).join('; ');
    lines.push(`${s.id}. ${MARKS[s.status]} ${s.title} (${extra})`);
  }
  lines.push(`Retries used: ${plan.retries_used} of ${plan.max_retries} (max_plan_retries).`);
  return lines.join('\n');
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim().slice(0, MAX_TEXT) : '');
const isOpen = (s: PlanStep) => s.status === 'pending' || s.status === 'in_progress';

export interface PlanTrackerDeps {
  settings: PlanningSettings;
  /** Appends the `plan` event; awaited, so the trace has the plan before the model hears the change took. */
  emit(data: Record<string, unknown>): Promise<void>;
  run: number;
  attempt: number;
  /** The plan an earlier attempt of this run left in the trace. */
  restored?: Plan;
  /** Names already taken by the agent's other tools. */
  taken: ReadonlySet<string>;
}

export class PlanTracker implements ToolGate {
  private plan: Plan | undefined;
  private reminders = 0;
  readonly createName: string;
  readonly updateName: string;

  constructor(private readonly d: PlanTrackerDeps) {
    this.plan = d.restored ? { ...d.restored, max_retries: d.settings.maxRetries } : undefined;
    this.createName = freeName('create_plan', d.taken);
    this.updateName = freeName('update_plan', new Set([...d.taken, this.createName]));
  }

  get current(): Plan | undefined {
    return this.plan;
  }

  /**
   * The system prompt's sections: how to plan (the runtime's own text), and the plan an interrupted attempt left,
   * which the model wrote: screened by the run's guards like the replayed conversation.
   */
  promptSections(): ContextSection[] {
    const parts = [
      `Deep planning is on. Before acting, write a plan with \`${this.createName}\`: a short checklist of concrete steps. Work through it in order: ` +
        `mark a step \`in_progress\` with \`${this.updateName}\` when you start it, \`completed\` when it is done (with a short note of the outcome), ` +
        `or \`failed\` with the reason. A failed step may be retried by setting it \`in_progress\` again: at most ${this.d.settings.maxRetries} ` +
        `retr${this.d.settings.maxRetries === 1 ? 'y' : 'ies'} in this run. Revise the plan with \`${this.createName}\` when it no longer fits (completed steps are kept). ` +
        'Answer only when every step is completed, failed or skipped.',
    ];
    if (this.d.settings.enforce) parts.push('The plan is mandatory: other tools are refused until it exists.');
    if (this.plan) {
      parts.push(
        `This run was interrupted and is being resumed (attempt ${this.d.attempt}). The plan recorded before the interruption is ` +
          'in "Plan so far"; completed steps are done already (their effects happened): do not repeat them.',
      );
    }
    const out: ContextSection[] = [{ title: 'Planning', text: parts.join('\n\n') }];
    if (this.plan) out.push({ title: 'Plan so far', text: renderPlan(this.plan), guardOrigin: 'history' });
    return out;
  }

  tools(): RuntimeTool[] {
    return [
      {
        name: this.createName,
        description: 'Write the plan for this task as a checklist of steps, or revise it (completed steps are kept, the others are replaced).',
        inputSchema: {
          type: 'object',
          properties: {
            goal: { type: 'string', description: 'What the plan achieves, in one sentence.' },
            steps: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_STEPS, description: 'The steps, in order.' },
          },
          required: ['steps'],
          additionalProperties: false,
        },
        mutating: false,
        uncounted: true,
        execute: (args) => this.create(args),
      },
      {
        name: this.updateName,
        description: 'Change the status of one step of the plan: in_progress, completed, failed or skipped, with an optional note.',
        inputSchema: {
          type: 'object',
          properties: {
            step_id: { type: 'integer', minimum: 1 },
            status: { type: 'string', enum: ['in_progress', 'completed', 'failed', 'skipped'] },
            note: { type: 'string', description: 'The outcome, or why it failed or was skipped.' },
          },
          required: ['step_id', 'status'],
          additionalProperties: false,
        },
        mutating: false,
        uncounted: true,
        execute: (args) => this.update(args),
      },
    ];
  }

  private async create(args: Record<string, unknown>): Promise<string> {
    const titles = (Array.isArray(args.steps) ? args.steps : []).map(text).filter(Boolean).slice(0, MAX_STEPS);
    if (titles.length === 0) throw new Error('A plan needs at least one step.');
    const kept = this.plan?.steps.filter((s) => s.status === 'completed') ?? [];
    let next = Math.max(0, ...(this.plan?.steps.map((s) => s.id) ?? [])) + 1;
    const steps = [...kept, ...titles.map((title) => ({ id: next++, title, status: 'pending' as const, attempts: 0, note: null }))];
    const action = this.plan ? 'revised' : 'created';
    this.plan = { goal: text(args.goal) || this.plan?.goal || null, steps, retries_used: this.plan?.retries_used ?? 0, max_retries: this.d.settings.maxRetries };
    await this.publish(action);
    return `Plan ${action}.\n${renderPlan(this.plan)}`;
  }

  private async update(args: Record<string, unknown>): Promise<string> {
    const plan = this.plan;
    if (!plan) throw new Error(`There is no plan yet: call ${this.createName} first.`);
    const step = plan.steps.find((s) => s.id === args.step_id);
    if (!step) throw new Error(`The plan has no step ${String(args.step_id)}; its steps are ${plan.steps.map((s) => s.id).join(', ')}.`);
    const status = args.status as PlanStepStatus;
    if (step.status === 'completed' && status !== 'completed') {
      throw new Error(`Step ${step.id} is completed and stays so; add a new step with ${this.createName} if more work is needed.`);
    }
    let action = 'updated';
    if (step.status === 'failed' && (status === 'in_progress' || status === 'completed')) {
      if (plan.retries_used >= plan.max_retries) {
        throw new Error(
          `Retry limit reached: max_plan_retries is ${plan.max_retries} and ${plan.retries_used} retr${plan.retries_used === 1 ? 'y was' : 'ies were'} used. ` +
            `Step ${step.id} stays failed: skip what depends on it, finish the other steps, and report the failure in your answer.`,
        );
      }
      plan.retries_used++;
      action = 'retry';
    }
    if (status === 'in_progress' && step.status !== 'in_progress') step.attempts++;
    if (status === 'completed' && step.attempts === 0) step.attempts = 1;
    step.status = status;
    const note = text(args.note);
    if (note) step.note = note;
    await this.publish(action, step.id);
    const left = plan.max_retries - plan.retries_used;
    const hint = status === 'failed' ? (left > 0 ? ` You may retry it (${left} retr${left === 1 ? 'y' : 'ies'} left in this run).` : ' No retries are left in this run.') : '';
    return `Step ${step.id} is ${status.replace('_', ' ')}.${hint}\n${renderPlan(plan)}`;
  }

  private publish(action: string, stepId?: number): Promise<void> {
    return this.d.emit({ action, ...(stepId ? { step_id: stepId } : {}), run: this.d.run, attempt: this.d.attempt, enforce: this.d.settings.enforce, plan: this.plan });
  }

  /** Published once when a resumed attempt picks the plan up, so the trace shows where it went on from. */
  async announceRestored(): Promise<void> {
    if (this.plan) await this.publish('restored');
  }

  // ---- ToolGate

  choice(): ForcedChoice | undefined {
    return this.d.settings.enforce && !this.plan ? { type: 'tool', toolName: this.createName } : undefined;
  }

  refuse(_tool: RuntimeTool | undefined, toolName: string): string | undefined {
    if (!this.d.settings.enforce || this.plan || toolName === this.createName || toolName === this.updateName) return undefined;
    return `Plan first: this agent requires a plan before any other tool. Call ${this.createName} with the steps, then continue. "${toolName}" was not executed.`;
  }

  annotate(toolName: string): Record<string, unknown> | undefined {
    const active = this.plan?.steps.find((s) => s.status === 'in_progress');
    return active && toolName !== this.createName && toolName !== this.updateName ? { plan_step: active.id } : undefined;
  }

  record(): void {}

  objectToAnswer(): string | undefined {
    if (this.reminders >= MAX_REMINDERS) return undefined;
    if (!this.plan) {
      if (!this.d.settings.enforce) return undefined;
      this.reminders++;
      return `This agent must plan before answering: call ${this.createName} first.`;
    }
    const open = this.plan.steps.filter(isOpen);
    if (open.length === 0) return undefined;
    this.reminders++;
    return (
      `Your plan still has open steps: ${open.map((s) => `${s.id}. ${s.title}`).join('; ')}. ` +
      `Continue with them, or mark each completed, failed or skipped with ${this.updateName}, then answer.`
    );
  }
}

function freeName(base: string, taken: ReadonlySet<string>): string {
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
  return name;
}
