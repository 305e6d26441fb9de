import { rng } from '../hostile/fuzz-gen.js';

/**
 * Vectors for the tests of the vector rankings in SQL (db/cosine-order.ts): seeded, so that a failure replays.
 */

export interface RankingCase {
  query: number[];
  /** In insertion order; the ranking is compared with cosine() of these. */
  vectors: number[][];
}

/**
 * A query and `count` random vectors of `dims` dimensions whose norms differ by up to 10^4 (a ranking that ignores a
 * row's norm gets them wrong), plus the awkward ones: a zero vector, an exact duplicate (a tie, broken by the
 * caller's order), the query's opposite, and vectors whose first component, like the query's, is 1e-30 (their
 * product is below float4's range: a float4 multiply in PostgreSQL fails with "value out of range: underflow").
 */
export function rankingCase(seed: number, count: number, dims: number): RankingCase {
  const r = rng(seed);
  const gauss = () => r() + r() + r() - 1.5;
  const vector = () => {
    const scale = 10 ** (r() * 4 - 2);
    return Array.from({ length: dims }, () => gauss() * scale);
  };
  const query = vector();
  query[0] = 1e-30;
  const vectors = Array.from({ length: count }, vector);
  for (let i = 0; i < vectors.length; i += 5) vectors[i]![0] = 1e-30;
  vectors.splice(count >> 1, 0, new Array<number>(dims).fill(0));
  vectors.push(vectors[3]!.slice(), query.map((x) => -x));
  return { query, vectors };
}
