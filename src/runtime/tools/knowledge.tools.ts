import type { KnowledgeService, SearchHit } from '../../knowledge/knowledge.service.js';
import { agentScopes } from '../../knowledge/search-scope.js';
import type { RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';

/**
 * Knowledge-base tools (docs/contract.md#knowledge): `agentic_rag` knowledge bases give the agent one search tool over
 * all of them; knowledge bases with `rw` true give it a tool that adds a document (indexed like any other). `vanilla`
 * knowledge bases offer no tool: their passages are injected into the context (src/knowledge/knowledge-context.ts).
 * An item's non-empty `documents` limits the search of its knowledge base to those documents, in the query itself;
 * a document the agent writes is not among them, and the write tool says so rather than promise it will be found.
 */

type KnowledgePort = Pick<KnowledgeService, 'search' | 'addText'>;

export const SEARCH_TOOL = 'search_knowledge_base';
export const ADD_DOCUMENT_TOOL = 'add_knowledge_document';
const MAX_TOP_K = 20;

interface AttachedKb {
  id: string;
  name?: string | null;
  description?: string | null;
  strategy: string;
  rw?: boolean;
  documents?: string[] | null;
}

export class KnowledgeToolProvider implements RuntimeToolProvider {
  constructor(private readonly knowledge: KnowledgePort) {}

  buildTools(agent: RunContextAgent): RuntimeTool[] {
    const kbs: AttachedKb[] = agent.knowledge_bases;
    const searchable = kbs.filter((kb) => kb.strategy === 'agentic_rag');
    const writable = kbs.filter((kb) => kb.rw === true);
    const tools: RuntimeTool[] = [];
    if (searchable.length) tools.push(this.searchTool(searchable));
    // Knowledge bases this agent reads only in part, on any strategy: what it writes there it will not find.
    const partial = new Set(agentScopes(kbs).filter((s) => s.documentIds !== null).map((s) => s.kbId));
    if (writable.length) tools.push(this.addTool(writable, partial));
    return tools;
  }

  private searchTool(kbs: AttachedKb[]): RuntimeTool {
    const scopes = agentScopes(kbs);
    return {
      name: SEARCH_TOOL,
      description: `Search your knowledge bases for passages relevant to a query; cite what you use. Knowledge bases: ${describe(kbs)}.`,
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What to look for, in words likely to appear in the answer.' },
          top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K, description: 'How many passages to return (default 5).' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      mutating: false,
      execute: async (args, ctx: ToolCallContext) => {
        const query = typeof args.query === 'string' ? args.query : '';
        if (!query.trim()) throw new Error('query must be a non-empty string');
        const topK = Number.isInteger(args.top_k) ? Math.min(Math.max(args.top_k as number, 1), MAX_TOP_K) : 5;
        const hits = await this.knowledge.search(ctx.organizationId, scopes, query, topK, ctx.signal);
        return hits.map(present);
      },
    };
  }

  private addTool(kbs: AttachedKb[], partial: ReadonlySet<string>): RuntimeTool {
    const ids = kbs.map((k) => k.id);
    return {
      name: ADD_DOCUMENT_TOOL,
      description: `Save a document (Markdown text) into one of your writable knowledge bases so it can be found later. Writable: ${describe(kbs)}.`,
      inputSchema: {
        type: 'object',
        properties: {
          title: { type: 'string', description: 'A short, descriptive document title.' },
          content: { type: 'string', description: 'The full text of the document (Markdown).' },
          knowledge_base_id: { type: 'string', enum: ids, description: ids.length > 1 ? 'Which knowledge base to write to.' : 'Optional; there is one.' },
        },
        required: ids.length > 1 ? ['title', 'content', 'knowledge_base_id'] : ['title', 'content'],
        additionalProperties: false,
      },
      mutating: true,
      execute: async (args, ctx: ToolCallContext) => {
        const kbId = typeof args.knowledge_base_id === 'string' ? args.knowledge_base_id : ids.length === 1 ? ids[0]! : undefined;
        if (!kbId || !ids.includes(kbId)) throw new Error(`knowledge_base_id must be one of: ${ids.join(', ')}`);
        const title = typeof args.title === 'string' && args.title.trim() ? args.title.trim().slice(0, 200) : 'Untitled';
        const content = typeof args.content === 'string' ? args.content : '';
        if (!content.trim()) throw new Error('content must be a non-empty string');
        const doc = await this.knowledge.addText(ctx.organizationId, kbId, title, `# ${title}\n\n${content}`);
        const note = partial.has(kbId)
          ? 'The document is being indexed. Your searches of this knowledge base are limited to the documents chosen in your configuration, so you will not find this one yourself.'
          : 'The document is being indexed and becomes searchable shortly.';
        return { document_id: doc.id, knowledge_base_id: kbId, status: doc.status, note };
      },
    };
  }
}

function describe(kbs: AttachedKb[]): string {
  return kbs
    .map((k) => {
      const notes = [k.description, k.documents?.length ? `limited to ${k.documents.length} chosen document(s)` : null].filter(Boolean);
      return `${k.name ?? k.id}${notes.length ? ` (${notes.join('; ')})` : ''}`;
    })
    .join('; ');
}

function present(h: SearchHit) {
  return { content: h.content, score: h.score, document_id: h.document_id, document_name: h.document_name, section: h.heading || undefined };
}
