/**
 * Pure helpers of retrieval: the terms of a lexical query, and reciprocal-rank fusion of several ranked lists.
 */

/** Words that carry no meaning in a question; dropped so an OR query is not dominated by them. */
const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me might more most must my myself no nor not now of off on once ' +
    'only or other our ours ourselves out over own same shall she should so some such than that the their theirs them ' +
    'themselves then there these they this those through to too under until up upon very was we were what when where ' +
    'which while who whom why will with would you your yours yourself yourselves tell give list says say according ' +
    'many much does'
  ).split(' '),
);

/**
 * The distinct meaningful words of a query, lower-cased, letters and digits only (so no word can carry query
 * syntax into FTS5 or tsquery). Falls back to every word when all of them are stop words.
 */
export function queryTerms(query: string, max = 32): string[] {
  const words = query
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0 && w.length <= 64);
  const meaningful = words.filter((w) => !STOP_WORDS.has(w) && !(w.length === 1 && !/\d/.test(w)));
  const chosen = meaningful.length ? meaningful : words;
  return [...new Set(chosen)].slice(0, max);
}

export interface Ranked {
  /** Chunk key. */
  seq: number;
}

/** The RRF constant: dampens the difference between the very first ranks (Cormack et al., 2009). */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion. Each list contributes (K+1)/(K+rank) for an item at 1-based `rank`; the sum is divided by
 * the number of lists, so an item first in every list scores 1.0 and scores compare across queries and databases
 * (raw bm25 and ts_rank values do not).
 */
export function fuse(lists: Ranked[][], topK: number): { seq: number; score: number }[] {
  const used = lists.filter((l) => l.length > 0);
  if (!used.length) return [];
  const scores = new Map<number, number>();
  for (const list of used) {
    list.forEach((item, i) => {
      scores.set(item.seq, (scores.get(item.seq) ?? 0) + (RRF_K + 1) / (RRF_K + i + 1));
    });
  }
  return [...scores.entries()]
    .map(([seq, s]) => ({ seq, score: Math.round((s / used.length) * 1e6) / 1e6 }))
    .sort((a, b) => b.score - a.score || a.seq - b.seq)
    .slice(0, topK);
}

/** Cosine similarity of two vectors of the same length (0 when either is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
