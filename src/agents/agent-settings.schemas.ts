import { z } from 'zod';
import { compileSafePattern } from '../lib/safe-regexp.js';

/**
 * Parts of the agent configuration (agent.schemas.ts) with rules of their own: the run bounds, task_level_strategies
 * and the top-level skills elements (docs/decisions.md, "Agents: configuration").
 */

const id = () => z.string().min(1).max(256);

/** The most tool calls one run may make (agno_settings.tool_call_limit); each is an LLM round trip and a trace event. */
export const MAX_TOOL_CALL_LIMIT = 500;
/** The most LLM calls one run may make (task_level_strategies.iterative_strategy.max_iterations). */
export const MAX_ITERATIONS = 200;

/** The longest window duplication_prevention remembers an event: a week (its keys live as long as that at most). */
export const MAX_DEDUP_TTL_MINUTES = 7 * 24 * 60;
/** Selectors per key, and characters per selector. */
const MAX_DEDUP_SELECTORS = 10;

/**
 * xpander's duplication prevention (docs/contract.md#duplicate-events): an invocation whose selected values match
 * one accepted within `ttl_minutes` answers that task instead of starting another (src/tasks/task-dedup.ts).
 */
const DuplicationPrevention = z.strictObject({
  enabled: z.boolean().optional(),
  ttl_minutes: z.number().int().min(1).max(MAX_DEDUP_TTL_MINUTES).optional(),
  selectors: z
    .array(z.string().min(1).max(256).refine((p) => p.trim() === p && !p.split('.').includes(''), { message: 'a dot-notation path such as payload.uid' }))
    .min(1)
    .max(MAX_DEDUP_SELECTORS),
});

/** The condition types of xpander's OrchestrationCondition that mean something for one run's answer (run-stop.ts). */
export const RUN_CONDITION_TYPES = ['regex', 'contains', 'equal', 'not_equal', 'gt', 'lt', 'gte', 'lte', 'not_empty'] as const;
const TEXT_CONDITIONS = new Set(['regex', 'contains']);

/**
 * A condition on the model's text at a step of a run (docs/contract.md#stop-conditions): `regex` / `contains` test
 * `term` against the text; the comparisons test `value` against the JSON answer's `path` (the whole trimmed text when
 * no path is given). `else` (always true) and `group_id` (classifier routing) belong to orchestrations.
 */
const RunCondition = z
  .strictObject({
    type: z.enum(RUN_CONDITION_TYPES),
    term: z.string().min(1).max(1000).nullable().optional(),
    path: z.string().min(1).max(256).nullable().optional(),
    value: z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]).optional(),
    group_id: z.null().optional(),
  })
  .superRefine((c, ctx) => {
    if (TEXT_CONDITIONS.has(c.type)) {
      if (!c.term) ctx.addIssue({ code: 'custom', path: ['term'], message: `a '${c.type}' condition needs term` });
      else if (c.type === 'regex' && !compilesOnRe2(c.term)) {
        ctx.addIssue({ code: 'custom', path: ['term'], message: 'term is not a regular expression RE2 can run (lookaround and backreferences are not supported)' });
      }
      if (c.path || c.value !== undefined) ctx.addIssue({ code: 'custom', path: [c.path ? 'path' : 'value'], message: `a '${c.type}' condition tests term against the text: path and value do nothing` });
    } else {
      if (c.term) ctx.addIssue({ code: 'custom', path: ['term'], message: `a '${c.type}' condition compares value (at path): term does nothing` });
      if (c.type === 'not_empty' ? !c.path : c.value === undefined) {
        ctx.addIssue({ code: 'custom', path: [c.type === 'not_empty' ? 'path' : 'value'], message: c.type === 'not_empty' ? "a 'not_empty' condition needs path" : `a '${c.type}' condition needs value` });
      }
    }
  });

function compilesOnRe2(pattern: string): boolean {
  try {
    compileSafePattern(pattern);
    return true;
  } catch {
    return false;
  }
}

/**
 * docs/contract.md#task-strategies. Strict: a key the runtime does not read (a misspelt one, or spec 2.1's "persistent
 * context", which has no defined fields) would be stored and ignored, so it is `extra_forbidden`.
 */
export const TaskLevelStrategies = z.strictObject({
  // max_retries is refused above 10 (MAX_RETRIES in tasks/task-agents.ts, which also clamps rows stored before the limit).
  retry_strategy: z
    .strictObject({ enabled: z.boolean().optional(), max_retries: z.number().int().min(0).max(10).optional() })
    // Retries run only with enabled true: a count without the switch would be stored and never used.
    .refine((r) => r.max_retries === undefined || r.enabled !== undefined, {
      message: 'retry_strategy.max_retries needs enabled: true to retry (or enabled: false to keep it switched off)',
      path: ['enabled'],
    })
    .nullable()
    .optional(),
  // enabled false: the run uses the default bound (docs/contract.md#task-strategies), max_iterations and
  // end_condition are kept for later.
  iterative_strategy: z
    .strictObject({ enabled: z.boolean().optional(), max_iterations: z.number().int().min(1).max(MAX_ITERATIONS).optional(), end_condition: RunCondition.nullable().optional() })
    .nullable()
    .optional(),
  // xpander's OrchestrationStopStrategy, for one run (src/runtime/run-stop.ts); stop_on_failure defaults to true there.
  stop_strategy: z
    .strictObject({ enabled: z.boolean().optional(), stop_on_failure: z.boolean().optional(), stop_on_condition: RunCondition.nullable().optional() })
    .nullable()
    .optional(),
  max_runs_per_day: z.number().int().min(1).nullable().optional(),
  duplication_prevention: DuplicationPrevention.nullable().optional(),
  // xpander's agentic context (a store the agent reads and updates across tasks); true is refused until it acts
  // (unsupported-settings.ts), false is what every agent does.
  agentic_context_enabled: z.boolean().optional(),
});

/**
 * A top-level `skills` element (spec 2.1: array of object): a skill of the catalog (GET /v1/skills) by `name` (or
 * `skill_name`, the tool entry's word), resolved on write like `tools:[{type:"skill"}]`; `description` is shown on the
 * agent's A2A card.
 */
export const SkillElement = z
  .strictObject({ name: id().optional(), skill_name: id().optional(), description: z.string().nullable().optional() })
  .refine((s) => Boolean(s.name) !== Boolean(s.skill_name), { message: 'a skill needs exactly one of name or skill_name (a skill of GET /v1/skills)' });

