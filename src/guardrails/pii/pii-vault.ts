import { detectPii, type PiiMatch, type PiiScanOptions } from './pii-detectors.js';
import { foundValue, groupPii, type PiiFound } from './pii-found.js';

/**
 * The placeholders of one run: each distinct value found gets `<KIND_n>` (n counts per kind, from 1, in the order
 * the values reach the model), the same value always the same placeholder, so the model can still tell two
 * e-mail addresses apart and refer back to one. The vault lives in the run's memory only: it is never stored, and
 * the real values never leave it except back to where they came from (tool arguments, the task's result).
 */
export class PiiVault {
  private readonly byCanonical = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly counters = new Map<string, number>();

  constructor(readonly opts: PiiScanOptions) {}

  /** `text` with every detection replaced by its placeholder, and the kinds replaced (for the trace). */
  mask(text: string): { text: string; kinds: Record<string, number> } {
    return this.maskFound(text, groupPii(detectPii(text, this.opts)));
  }

  /** mask() with the detections already made (detectPii(text) with this vault's options, maybe on a worker thread). */
  maskFound(text: string, found: PiiFound): { text: string; kinds: Record<string, number> } {
    const n = found.which.length;
    if (n === 0) return { text, kinds: {} };
    // Values in the order first found, so the numbering is the order the model reads them in.
    const placeholders: string[] = [];
    for (let v = 0; v < found.valueKind.length; v++) placeholders.push(this.placeholderFor(foundValue(found, v)));
    const kinds: Record<string, number> = {};
    let out = '';
    let last = 0;
    for (let i = 0; i < n; i++) {
      const v = found.which[i]!;
      out += text.slice(last, found.start[i]) + placeholders[v];
      last = found.end[i]!;
      const kind = found.kinds[found.valueKind[v]!]!;
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    return { text: out + text.slice(last), kinds };
  }

  /** Puts the real values back in place of the placeholders this vault gave out; others stay as written. */
  restore(text: string): string {
    if (this.byPlaceholder.size === 0 || !text.includes('<')) return text;
    return text.replace(PLACEHOLDER, (p) => this.byPlaceholder.get(p) ?? p);
  }

  /** restore() on every string inside a JSON value (tool-call arguments). */
  restoreDeep(value: unknown, depth = 0): unknown {
    if (this.byPlaceholder.size === 0 || depth > 64) return value;
    if (typeof value === 'string') return this.restore(value);
    if (Array.isArray(value)) return value.map((v) => this.restoreDeep(v, depth + 1));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.restore(k)] = this.restoreDeep(v, depth + 1);
      return out;
    }
    return value;
  }

  get size(): number {
    return this.byPlaceholder.size;
  }

  private placeholderFor(m: Pick<PiiMatch, 'kind' | 'canonical' | 'value'>): string {
    const key = `${m.kind}\u0000${m.canonical}`;
    let p = this.byCanonical.get(key);
    if (!p) {
      const n = (this.counters.get(m.kind) ?? 0) + 1;
      this.counters.set(m.kind, n);
      p = `<${m.kind}_${n}>`;
      this.byCanonical.set(key, p);
      this.byPlaceholder.set(p, m.value);
    }
    return p;
  }
}

const PLACEHOLDER = /<[A-Z][A-Z_]{0,30}_\d{1,6}>/g;

/** The longest placeholder, for holding back a streamed answer's tail that may be the start of one. */
export const MAX_PLACEHOLDER_LENGTH = 40;
