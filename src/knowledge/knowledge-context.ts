import type { Awaitable } from '../lib/awaitable.js';
import type { ContextContributor, ContextContributorInput, ContextSection } from '../runtime/context-contributors.js';
import type { KnowledgeService, SearchHit } from './knowledge.service.js';
import { agentScopes, type SearchScope } from './search-scope.js';
import type { Task } from '../tasks/task.types.js';

/** Passages injected for `vanilla` knowledge bases, and the most text they may take in the prompt. */
export const VANILLA_TOP_K = 5;
const MAX_CONTEXT_CHARS = 12_000;

/**
 * `vanilla` knowledge bases (docs/contract.md#knowledge): the top passages for the task's input are searched before the
 * run and placed in the system prompt, so the agent answers from them without having to call a tool.
 */
export class KnowledgeContext implements ContextContributor {
  constructor(private readonly knowledge: Pick<KnowledgeService, 'search'>) {}

  contribute({ agent, task, signal }: ContextContributorInput): Awaitable<ContextSection | null> {
    // Each item's `documents`, when not empty, limits what is searched of its knowledge base.
    const scopes = agentScopes(agent.knowledge_bases.filter((kb) => kb.strategy === 'vanilla'));
    const query = task.input.text ?? '';
    if (!scopes.length || !query.trim()) return null;
    return this.passagesFor(task, scopes, query, signal);
  }

  private async passagesFor(task: Task, scopes: SearchScope[], query: string, signal: AbortSignal): Promise<ContextSection | null> {
    const hits = await this.knowledge.search(task.organization_id, scopes, query, VANILLA_TOP_K, signal);
    if (!hits.length) return null;
    return { title: 'Knowledge', text: formatPassages(hits), guardOrigin: 'knowledge' };
  }
}

export function formatPassages(hits: SearchHit[]): string {
  const parts = ['Passages from your knowledge bases, most relevant first. Answer from them when they cover the request, and say so when they do not.'];
  let used = parts[0]!.length;
  hits.forEach((h, i) => {
    const source = h.heading ? `${h.document_name} — ${h.heading}` : h.document_name;
    const block = `[${i + 1}] ${source}\n${h.content}`;
    if (used + block.length > MAX_CONTEXT_CHARS) return;
    parts.push(block);
    used += block.length + 2;
  });
  return parts.join('\n\n');
}
