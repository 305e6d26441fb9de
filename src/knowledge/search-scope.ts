import { UUID_RE } from '../lib/ids.js';

/**
 * What one search may read of one knowledge base: the whole of it (`documentIds` null), or only the chunks of the
 * listed documents. An empty list reads nothing: a restriction never widens into the whole knowledge base.
 */
export interface SearchScope {
  kbId: string;
  documentIds: string[] | null;
}

/** An agent's `knowledge_bases` item, as far as search is concerned. */
export interface AgentKbRef {
  id: string;
  documents?: string[] | null;
}

/**
 * The scopes of an agent's knowledge-base items (docs/decisions.md#knowledge-bases): `documents` empty = the whole
 * knowledge base, otherwise only those documents. The same knowledge base listed twice reads the union (whole wins).
 */
export function agentScopes(kbs: readonly AgentKbRef[]): SearchScope[] {
  const byKb = new Map<string, Set<string> | null>();
  for (const kb of kbs) {
    const docs = kb.documents ?? [];
    const seen = byKb.get(kb.id);
    if (seen === null) continue;
    if (!docs.length) byKb.set(kb.id, null);
    else byKb.set(kb.id, new Set([...(seen ?? []), ...docs]));
  }
  return [...byKb].map(([kbId, docs]) => ({ kbId, documentIds: docs ? [...docs] : null }));
}

/** Drops what cannot be an id (every id here is a UUID); a restricted scope stays restricted, if to nothing. */
export function validScopes(scopes: readonly SearchScope[]): SearchScope[] {
  return scopes
    .filter((s) => UUID_RE.test(s.kbId))
    .map((s) => ({ kbId: s.kbId, documentIds: s.documentIds === null ? null : s.documentIds.filter((d) => UUID_RE.test(d)) }));
}
