import type { JsonObject } from './document.js';

/**
 * Resolves the `$ref` forms found in real documents: JSON pointers into the document (`#/components/schemas/X`),
 * plain-name anchors (`#pet`), and references by a schema's `$id` with an optional pointer or anchor
 * (`/components/schemas/petdetails#pet_details_id`, OpenAPI 3.1). External files and URLs are not fetched:
 * they resolve to nothing and the inliner leaves a truncation marker.
 */

export interface ResolvedRef {
  /** Canonical key (what cycle detection compares). */
  key: string;
  /** Human name used in markers: the last pointer segment, the anchor or the $id. */
  name: string;
  target: unknown;
}

export class RefResolver {
  private ids?: Map<string, unknown>;
  private anchors?: Map<string, unknown>;
  private readonly cache = new Map<string, ResolvedRef | null>();

  constructor(private readonly doc: JsonObject) {}

  resolve(ref: string): ResolvedRef | undefined {
    let hit = this.cache.get(ref);
    if (hit === undefined) {
      hit = this.lookup(ref) ?? null;
      this.cache.set(ref, hit);
    }
    return hit ?? undefined;
  }

  private lookup(ref: string): ResolvedRef | undefined {
    const hash = ref.indexOf('#');
    const base = hash >= 0 ? ref.slice(0, hash) : ref;
    const fragment = hash >= 0 ? decodeFragment(ref.slice(hash + 1)) : '';
    let root: unknown = this.doc;
    let rootKey = '#';
    if (base) {
      this.indexIds();
      root = this.ids!.get(base) ?? this.ids!.get(base.replace(/^\.?\//, '/'));
      if (root === undefined) return undefined;
      rootKey = base;
    }
    if (fragment === '') return root === this.doc ? undefined : { key: rootKey, name: lastSegment(base), target: root };
    if (fragment.startsWith('/')) {
      const target = pointer(root, fragment);
      if (target === undefined) return undefined;
      const segs = fragment.split('/');
      return { key: `${rootKey}${fragment}`, name: unescape(segs[segs.length - 1]) || lastSegment(base), target };
    }
    this.indexIds();
    const target = this.anchors!.get(fragment);
    return target === undefined ? undefined : { key: `#anchor:${fragment}`, name: fragment, target };
  }

  /** One walk of the document collects every `$id` and `$anchor` (only when a reference needs them). */
  private indexIds(): void {
    if (this.ids) return;
    this.ids = new Map();
    this.anchors = new Map();
    const seen = new Set<unknown>();
    const walk = (node: unknown) => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      if (Array.isArray(node)) return node.forEach(walk);
      const o = node as JsonObject;
      if (typeof o.$id === 'string') this.ids!.set(o.$id, o);
      if (typeof o.$anchor === 'string' && !this.anchors!.has(o.$anchor)) this.anchors!.set(o.$anchor, o);
      for (const v of Object.values(o)) walk(v);
    };
    walk(this.doc);
  }
}

function decodeFragment(f: string): string {
  try {
    return decodeURIComponent(f);
  } catch {
    return f;
  }
}

function unescape(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function lastSegment(s: string): string {
  const parts = s.split('/').filter(Boolean);
  return parts[parts.length - 1] ?? s;
}

function pointer(root: unknown, ptr: string): unknown {
  let cur = root;
  for (const raw of ptr.split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    const seg = unescape(raw);
    cur = Array.isArray(cur) ? cur[Number(seg)] : (cur as JsonObject)[seg];
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Follows `$ref` chains of non-schema objects (parameters, request bodies, responses) to the object itself.
 * Siblings of a reference (OpenAPI 3.1 allows `summary`/`description` there) override the target's fields.
 */
export function derefObject<T = JsonObject>(resolver: RefResolver, node: unknown, maxHops = 20): T | undefined {
  let cur = node;
  let siblings: JsonObject | undefined;
  for (let i = 0; i < maxHops; i++) {
    if (!cur || typeof cur !== 'object') return undefined;
    const { $ref: ref, ...rest } = cur as JsonObject;
    if (typeof ref !== 'string') return (siblings ? { ...(cur as JsonObject), ...siblings } : cur) as T;
    if (Object.keys(rest).length) siblings = { ...rest, ...siblings };
    cur = resolver.resolve(ref)?.target;
  }
  return undefined;
}
