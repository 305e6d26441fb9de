import { AppError } from '../errors.js';
import { collectRefs } from './workflow-mapping.js';
import { WORKFLOW_LIMITS, type WorkflowDefinition, type WorkflowStep } from './workflow.schemas.js';

/**
 * The whole-graph rules of a workflow definition, checked on create, PATCH and deploy; the first broken rule is a 422
 * whose `loc` names the field that breaks it (e.g. ['body','steps',2,'next']). Pure: no database.
 */

type Loc = (string | number)[];

/** One edge of the graph: from a step to the step a field names. */
interface Edge {
  to: string;
  field: Loc;
}

/** The steps a step hands over to (its `next`, a condition's case and default targets, a parallel's branches). */
export function edgesOf(step: WorkflowStep): Edge[] {
  const out: Edge[] = [];
  if (step.type === 'condition') {
    step.cases.forEach((c, j) => out.push({ to: c.next, field: ['cases', j, 'next'] }));
    if (step.default) out.push({ to: step.default, field: ['default'] });
    return out;
  }
  if (step.type === 'parallel') step.branches.forEach((b, j) => out.push({ to: b, field: ['branches', j] }));
  if (step.next) out.push({ to: step.next, field: ['next'] });
  return out;
}

export function startOf(def: Pick<WorkflowDefinition, 'start' | 'steps'>): string {
  return def.start ?? def.steps[0].id;
}

export function checkWorkflowGraph(def: WorkflowDefinition, at: Loc = ['body']): void {
  const index = new Map<string, number>();
  def.steps.forEach((s, i) => {
    if (index.has(s.id)) throw AppError.invalid([...at, 'steps', i, 'id'], `step id '${s.id}' is used twice`);
    index.set(s.id, i);
  });
  if (def.start !== undefined && !index.has(def.start)) throw AppError.invalid([...at, 'start'], `unknown step '${def.start}'`);
  const stepLoc = (id: string): Loc => [...at, 'steps', index.get(id)!];
  const edges = new Map<string, Edge[]>();
  for (const s of def.steps) {
    const es = edgesOf(s);
    for (const e of es) if (!index.has(e.to)) throw AppError.invalid([...stepLoc(s.id), ...e.field], `unknown step '${e.to}'`);
    edges.set(s.id, es);
  }
  refuseCycles(def, edges, stepLoc);
  const reach = (from: string) => reachable(from, edges);
  const start = startOf(def);
  const fromStart = reach(start);
  for (const s of def.steps) if (!fromStart.has(s.id)) throw AppError.invalid([...stepLoc(s.id), 'id'], `step '${s.id}' is never reached from the start step '${start}'`);
  // Branches of a parallel step run at once: a step in two of them, or in one and after the join, would run twice.
  const before = new Map<string, Set<string>>(def.steps.map((s) => [s.id, new Set<string>()]));
  for (const s of def.steps) for (const e of edges.get(s.id)!) before.get(e.to)!.add(s.id);
  for (const p of def.steps) {
    if (p.type !== 'parallel') continue;
    const after = p.next ? reach(p.next) : new Set<string>();
    const seen = new Map<string, number>();
    for (const [j, b] of p.branches.entries()) {
      for (const id of reach(b)) {
        if (seen.has(id) || after.has(id) || id === p.id) {
          throw AppError.invalid([...stepLoc(p.id), 'branches', j], `step '${id}' is reached from more than one branch of parallel step '${p.id}' (or also after it): branches must not share steps`);
        }
        seen.set(id, j);
        // Everything inside the branches runs before the step after the join.
        if (p.next) before.get(p.next)!.add(id);
      }
    }
    const width = widthOf(p, edges, def);
    if (width > WORKFLOW_LIMITS.maxParallelWidth) {
      throw AppError.invalid([...stepLoc(p.id), 'branches'], `parallel step '${p.id}' runs up to ${width} steps at once (nested parallels included); the limit is ${WORKFLOW_LIMITS.maxParallelWidth}`);
    }
  }
  for (const s of def.steps) checkRefs(s, stepLoc(s.id), index, ancestors(s.id, before));
  for (const r of collectRefs(def.output, [...at, 'output'])) {
    if (r.problem) throw AppError.invalid(r.at, r.problem);
    if (r.step !== undefined && !index.has(r.step)) throw AppError.invalid(r.at, `unknown step '${r.step}'`);
  }
}

/** Templates of a step may name the input and steps that certainly ran before it (its ancestors). */
function checkRefs(s: WorkflowStep, loc: Loc, index: Map<string, number>, earlier: Set<string>): void {
  const templates: [string, unknown][] = s.type === 'condition' ? [['value', s.value]] : s.type === 'approval' ? [['message', s.message]] : s.type === 'parallel' ? [] : [['input', s.input]];
  for (const [field, tpl] of templates) {
    for (const r of collectRefs(tpl, [...loc, field])) {
      if (r.problem) throw AppError.invalid(r.at, r.problem);
      if (r.step === undefined) continue;
      if (!index.has(r.step)) throw AppError.invalid(r.at, `unknown step '${r.step}'`);
      if (!earlier.has(r.step)) throw AppError.invalid(r.at, `step '${r.step}' does not run before step '${s.id}'`);
    }
  }
}

function refuseCycles(def: WorkflowDefinition, edges: Map<string, Edge[]>, stepLoc: (id: string) => Loc): void {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (id: string): void => {
    state.set(id, 'open');
    for (const e of edges.get(id)!) {
      const st = state.get(e.to);
      if (st === 'open') throw AppError.invalid([...stepLoc(id), ...e.field], `step '${id}' leads back to step '${e.to}': a workflow must not have cycles`);
      if (st === undefined) visit(e.to);
    }
    state.set(id, 'done');
  };
  for (const s of def.steps) if (!state.has(s.id)) visit(s.id);
}

function reachable(from: string, edges: Map<string, Edge[]>): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const e of edges.get(id) ?? []) stack.push(e.to);
  }
  return seen;
}

function ancestors(id: string, before: Map<string, Set<string>>): Set<string> {
  const seen = new Set<string>();
  const stack = [...before.get(id)!];
  while (stack.length) {
    const x = stack.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    stack.push(...before.get(x)!);
  }
  return seen;
}

/** How many steps a parallel step may run at once: its branches' widths added, a branch as wide as its widest parallel. */
function widthOf(p: Extract<WorkflowStep, { type: 'parallel' }>, edges: Map<string, Edge[]>, def: WorkflowDefinition): number {
  const byId = new Map(def.steps.map((s) => [s.id, s]));
  let total = 0;
  for (const b of p.branches) {
    let widest = 1;
    for (const id of reachable(b, edges)) {
      const s = byId.get(id)!;
      if (s.type === 'parallel') widest = Math.max(widest, widthOf(s, edges, def));
    }
    total += widest;
  }
  return total;
}
