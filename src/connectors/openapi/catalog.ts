import { createHash } from 'node:crypto';
import type { JsonObject } from './document.js';

/** The operations of a document as the catalog lists them (docs/contract.md#operation-catalog). */
export interface CatalogOperation {
  /** Stable catalog id: derived from method and path, so importing the same document again gives the same ids. */
  id: string;
  operationId: string;
  path: string;
  method: string;
  summary: string | null;
  description: string | null;
  tags: string[];
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A name-based UUID (version 8 layout) from SHA-256 of "METHOD path": stable, and shaped like every other id. */
export function catalogId(method: string, path: string): string {
  const h = createHash('sha256').update(`${method.toUpperCase()} ${path}`).digest();
  h[6] = (h[6] & 0x0f) | 0x80;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** "get" + "/users/{id}/repos" -> "get_users_id_repos" (what an operation without operationId is called). */
export function generatedOperationId(method: string, path: string): string {
  const words = path
    .replace(/[{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [method.toLowerCase(), ...words].join('_') || method.toLowerCase();
}

export function listOperations(doc: JsonObject): CatalogOperation[] {
  const paths = (doc.paths ?? {}) as Record<string, JsonObject>;
  const out: CatalogOperation[] = [];
  const taken = new Set<string>();
  const pending: { op: CatalogOperation; explicit: boolean }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!item || typeof item !== 'object') continue;
    for (const method of HTTP_METHODS) {
      const op = item[method] as JsonObject | undefined;
      if (!op || typeof op !== 'object') continue;
      const explicit = typeof op.operationId === 'string' && op.operationId.trim() !== '';
      pending.push({
        explicit,
        op: {
          id: catalogId(method, path),
          operationId: explicit ? (op.operationId as string).trim() : generatedOperationId(method, path),
          path,
          method,
          summary: typeof op.summary === 'string' ? op.summary : null,
          description: typeof op.description === 'string' ? op.description : null,
          tags: Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === 'string') : [],
        },
      });
    }
  }
  // The operationId is also the graph item id of an attached operation, so it must name one operation:
  // publishers' ids are kept first, a duplicate or a generated name that collides gets a numeric suffix.
  for (const p of [...pending.filter((p) => p.explicit), ...pending.filter((p) => !p.explicit)]) {
    let name = p.op.operationId;
    for (let n = 2; taken.has(name); n++) name = `${p.op.operationId}_${n}`;
    taken.add(name);
    p.op.operationId = name;
  }
  for (const p of pending) out.push(p.op);
  return out;
}
