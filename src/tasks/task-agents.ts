import { dedupRule, type DedupRule } from './task-dedup.js';
import { AppError } from '../errors.js';
import type { AgentAccess } from '../auth/agent-access.js';
import type { RunnableAgentConfig } from '../agents/agent-config.js';
import type { AgentConfig } from '../agents/agent.schemas.js';

/**
 * What the tasks domain needs from the agents domain, as a narrow port: the container adapts the agents
 * service to it, so the queue and the worker never depend on how agents are stored.
 */

/** The configuration a task runs: a published version or the draft. */
export interface RunnableAgent {
  id: string;
  organization_id: string;
  /** `ACTIVE` or `INACTIVE`: inactive agents refuse every invocation. */
  status: string;
  /** The version this configuration is: a published number or 'draft'. */
  version: number | 'draft';
  /** Typed and complete: the agents domain fills what older stored versions lack when it reads them. */
  config: RunnableAgentConfig;
}

/**
 * The agent as a submission needs it: status, version and the stored configuration with its secrets still sealed
 * (a submission reads only output and strategy settings). Shared, read-only: never mutate it.
 */
export interface SubmittableAgent {
  id: string;
  organization_id: string;
  status: string;
  version: number | 'draft';
  config: Readonly<AgentConfig>;
  /** Who may run it (src/auth/agent-access.ts); absent: anyone of the organization. */
  access?: AgentAccess;
}

export interface TaskAgentDirectory {
  /** Same refusals as getRunnable, without revealing or presenting anything: the cheap read of the submit path. */
  getSubmittable(organizationId: string, agentId: string, version?: number | 'draft'): Promise<SubmittableAgent>;
  /** Throws AppError not_found ("Agent not found", or the version's) when it does not exist in the organization. */
  getRunnable(organizationId: string, agentId: string, version?: number | 'draft'): Promise<RunnableAgent>;
  exists(organizationId: string, agentId: string): Promise<boolean>;
  /** Who may see the agent and its tasks, deleted agents included; undefined when it never existed. */
  accessOf(organizationId: string, agentId: string): Promise<AgentAccess | undefined>;
}

/** Claims allowed when the agent has no retry strategy: a crashed worker's task is still run again. */
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_MAX_RETRIES = 3;
/**
 * Retries an agent may ask for. Every claim counts an attempt, a worker that dies running a task included: without
 * a ceiling, `max_retries: 1e9` would let a task that kills its process be reclaimed after every restart, forever.
 */
export const MAX_RETRIES = 10;

export interface TaskStrategies {
  /** Claims of one run before it ends `error` (worker crashes and, with retries on, `error` outcomes). */
  maxAttempts: number;
  /** Whether an `error` outcome is run again while attempts remain. */
  retryOnError: boolean;
  /** Submissions per UTC day for the agent; undefined when unlimited. */
  maxRunsPerDay?: number;
  /** duplication_prevention when enabled (task-dedup.ts); undefined otherwise. */
  dedup?: DedupRule;
}

/**
 * Reads `task_level_strategies` (docs/contract.md#task-strategies) defensively: its inner fields are not in the spec.
 */
export function taskStrategies(config: Record<string, unknown>): TaskStrategies {
  const tls = asRecord(config.task_level_strategies);
  const retry = asRecord(tls?.retry_strategy);
  const enabled = retry?.enabled === true;
  const maxRetries = Math.min(MAX_RETRIES, nonNegativeInt(retry?.max_retries) ?? DEFAULT_MAX_RETRIES);
  // 0 or absent means no limit, as an unset field in the studio does.
  const perDay = nonNegativeInt(tls?.max_runs_per_day) || undefined;
  return {
    maxAttempts: enabled ? 1 + maxRetries : DEFAULT_MAX_ATTEMPTS,
    retryOnError: enabled && maxRetries > 0,
    maxRunsPerDay: perDay,
    dedup: tls ? dedupRule(tls.duplication_prevention) : undefined,
  };
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function nonNegativeInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * A workflow's agent (type `orchestration`) runs steps, not a model: an invocation's expected_output or
 * instructions_override would be stored and never read, so the submission is refused (422) naming the field.
 * (additional_context acts: steps read it as {{input.additional_context}}.)
 */
export function refuseModelOnlyFields(config: Record<string, unknown>, s: { expectedOutput?: string | null; instructionsOverride?: string | null }): void {
  if (config.type !== 'orchestration') return;
  const field = s.expectedOutput ? 'expected_output' : s.instructionsOverride ? 'instructions_override' : undefined;
  if (field) throw AppError.invalid(['body', field], `${field} has no effect on a workflow's agent (it runs the workflow's steps, not a model): leave it out`);
}
