import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/files/archive.js';
import type { ExtractJob } from '../../src/files/extract-file.js';
import { ExtractionPool, type ExtractResult } from '../../src/files/extraction-pool.js';
import { createLogger } from '../../src/lib/logger.js';
import { makeHugeDocx } from './hostile-builders.js';

/**
 * The extraction host is shared by every organization: one that floods it with slow files must not hold another's
 * small file behind all of them. Real child processes; a DOCX that inflates to 30 MiB of XML runs past a short
 * deadline every time, so each of its turns lasts exactly one deadline.
 */
const DEADLINE_MS = 1_000;
const limits = { image: { maxPixels: 40_000_000, maxSide: 30_000 }, maxSheetCells: 1_000_000 };
const job = (name: string, kind: ExtractJob['kind'], bytes: Uint8Array): ExtractJob => ({
  name,
  kind,
  bytes,
  archive: DEFAULT_ARCHIVE_LIMITS,
  spent: { entries: 0, bytes: 0 },
  limits,
});

describe('extraction host fair sharing', () => {
  const pool = new ExtractionPool({ processes: 1, timeoutMs: DEADLINE_MS, memoryMb: 400, queueLimit: 20, queuePerOrg: 5 }, createLogger('silent'));
  afterAll(() => pool.close());

  it("serves another organization's file after at most one of the flooding organization's turns", async () => {
    // Warm the child first: a fresh one also gets its start-up allowance, which is not what is measured here.
    expect((await pool.extract('org-b', job('warm.txt', 'txt', Buffer.from('warm')))).ok).toBe(true);

    const slow = job('slow.docx', 'docx', makeHugeDocx(30));
    const order: string[] = [];
    const flood = Array.from({ length: 6 }, (_, i) =>
      pool.extract('org-a', slow).then((r: ExtractResult) => {
        order.push(`a${i}`);
        return r;
      }),
    );
    // Org A is at its waiting cap: a seventh file is refused at once instead of queueing behind the others.
    await expect(pool.extract('org-a', slow)).rejects.toMatchObject({ code: 'unavailable' });

    const queued = Date.now();
    const small = await pool.extract('org-b', job('small.txt', 'txt', Buffer.from('hello from org b')));
    order.push('b');
    expect(small).toMatchObject({ ok: true, text: 'hello from org b' });
    // One of A's files was running and at most one more started ahead of B's: two deadlines (and two child restarts,
    // slow on a loaded machine), not six deadlines and six restarts.
    expect(Date.now() - queued).toBeLessThan(5_500);
    expect(order.indexOf('b')).toBeLessThanOrEqual(2);

    const results = await Promise.all(flood);
    // Each of A's files ended as a refusal of that file (the child killed at its deadline), none as a crash.
    for (const r of results) expect(r).toMatchObject({ ok: false, failure: 'too_large' });
    expect((await pool.extract('org-a', job('after.txt', 'txt', Buffer.from('still serving')))).ok).toBe(true);
  }, 60_000);
});
