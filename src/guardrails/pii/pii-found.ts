import type { PiiMatch } from './pii-detectors.js';

/**
 * The detections of one text as the PII guard uses them, grouped by value: each distinct value once (its kind,
 * canonical form and first spelling), and per detection only which value it is and where. A large text's
 * detections come back from a worker thread in this form (guard-scanner.ts): typed arrays and two strings, which
 * cross threads in milliseconds, where an object per detection cost the event loop ~3 µs each (0.4 s for the
 * 100,000 detections of an 8 MB text), and placeholders are then looked up once per value, not per detection.
 */
export interface PiiFound {
  kinds: string[];
  /** Per distinct value, in the order first found: its kind (index in `kinds`), canonical form, first spelling. */
  valueKind: Uint8Array;
  canonicals: PackedStrings;
  values: PackedStrings;
  /** Per detection, left to right: which value (index above), start, end. */
  which: Int32Array;
  start: Int32Array;
  end: Int32Array;
}

/** Strings end to end, and where each ends. */
export interface PackedStrings {
  chars: string;
  ends: Int32Array;
}

/** Nothing found: most texts. */
const NONE: PiiFound = Object.freeze({
  kinds: [],
  valueKind: new Uint8Array(0),
  canonicals: { chars: '', ends: new Int32Array(0) },
  values: { chars: '', ends: new Int32Array(0) },
  which: new Int32Array(0),
  start: new Int32Array(0),
  end: new Int32Array(0),
});

export function groupPii(matches: PiiMatch[]): PiiFound {
  const n = matches.length;
  if (n === 0) return NONE;
  const found = { kinds: [] as string[], which: new Int32Array(n), start: new Int32Array(n), end: new Int32Array(n) };
  const kindIndex = new Map<string, number>();
  const valueIndex = new Map<string, number>();
  const valueKinds: number[] = [];
  const canonicals: string[] = [];
  const values: string[] = [];
  matches.forEach((m, i) => {
    let k = kindIndex.get(m.kind);
    if (k === undefined) kindIndex.set(m.kind, (k = found.kinds.push(m.kind) - 1));
    const key = `${k}\u0000${m.canonical}`;
    let v = valueIndex.get(key);
    if (v === undefined) {
      valueIndex.set(key, (v = values.length));
      valueKinds.push(k);
      canonicals.push(m.canonical);
      values.push(m.value);
    }
    found.which[i] = v;
    found.start[i] = m.start;
    found.end[i] = m.end;
  });
  return { ...found, valueKind: Uint8Array.from(valueKinds), canonicals: pack(canonicals), values: pack(values) };
}

/** The value `i` of `found`: kind, canonical form, first spelling. */
export function foundValue(found: PiiFound, i: number): { kind: string; canonical: string; value: string } {
  return { kind: found.kinds[found.valueKind[i]!]!, canonical: unpackOne(found.canonicals, i), value: unpackOne(found.values, i) };
}

/** The kinds found, in the order of their first detection. */
export function foundKinds(found: PiiFound): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < found.which.length; i++) seen.add(found.kinds[found.valueKind[found.which[i]!]!]!);
  return [...seen];
}

function pack(strings: string[]): PackedStrings {
  const ends = new Int32Array(strings.length);
  let at = 0;
  strings.forEach((s, i) => (ends[i] = at += s.length));
  return { chars: strings.join(''), ends };
}

function unpackOne(p: PackedStrings, i: number): string {
  return p.chars.slice(i === 0 ? 0 : p.ends[i - 1]!, p.ends[i]!);
}
