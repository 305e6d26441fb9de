import { allOf, onceReady, settled, type Awaitable } from '../lib/awaitable.js';
import type { Logger } from '../lib/logger.js';
import type { Task } from '../tasks/task.types.js';
import type { RunContextAgent } from '../tools/tool-kinds.js';

/**
 * The hook through which other domains add text to a run's system prompt: knowledge-base `vanilla` injection
 * (top chunks for the task input), attached skills (name and description), ... Each domain registers one
 * contributor in its container section: `c.runtime.context.register('knowledge', new KnowledgeContext(...))`.
 */

export interface ContextSection {
  /** Heading of the section in the system prompt, e.g. "Knowledge" or "Skills". */
  title: string;
  text: string;
  /**
   * Where the text comes from, for every section not written by the agent's author or the runtime itself: the
   * guards screen the section as that origin. Unset means configuration (instructions, skills): sent as written.
   */
  guardOrigin?: 'knowledge' | 'history' | 'user';
}

export interface ContextContributorInput {
  agent: RunContextAgent;
  task: Task;
  signal: AbortSignal;
}

export interface ContextContributor {
  /** Sections for this run, or null/[] when the agent has nothing of this kind. */
  contribute(input: ContextContributorInput): Awaitable<ContextSection | ContextSection[] | null>;
}

export class ContextContributorRegistry {
  private readonly contributors = new Map<string, ContextContributor>();

  constructor(private readonly log: Logger) {}

  register(name: string, contributor: ContextContributor): void {
    this.contributors.set(name, contributor);
  }

  /**
   * Runs every contributor. Context is an aid, not a precondition: a contributor that fails is logged and left
   * out, and the run goes on without it. Synchronous when every contributor answers at once.
   */
  collect(input: ContextContributorInput): Awaitable<ContextSection[]> {
    const results: Awaitable<ContextSection | ContextSection[] | null>[] = [];
    for (const [name, c] of this.contributors) {
      results.push(
        settled(
          () => c.contribute(input),
          (e) => {
            this.log.warn({ err: e, contributor: name, task_id: input.task.id }, 'context contributor failed; run continues without it');
            return null;
          },
        ),
      );
    }
    return onceReady(allOf(results), sectionsOf);
  }
}

function sectionsOf(results: (ContextSection | ContextSection[] | null)[]): ContextSection[] {
  const out: ContextSection[] = [];
  for (const r of results) {
    if (r === null) continue;
    for (const s of Array.isArray(r) ? r : [r]) if (s.text.trim().length > 0) out.push(s);
  }
  return out;
}
