import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentLoader } from '../../src/connectors/openapi/document-loader.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { worstLoopGap } from '../support/loop-gap.js';

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), '../../../shared/openapi-corpus');

/**
 * Loading a large imported document (YAML parse, validation, upgrade, the operation list) took 1.0-1.4 s of the
 * event loop for the corpus's 3 MB documents: every request of the process waited. It runs on a worker thread.
 */
describe.each(TEST_DBS)('connector import off the event loop (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('imports a 3 MB YAML document while this process keeps serving', async () => {
    const yaml = readFileSync(join(CORPUS, 'openai__openapi.yaml'), 'utf8');
    const [r, worst, ms] = await worstLoopGap(() => t.req('POST', '/v1/connectors', { name: 'openai', openapi: yaml }));
    expect(r.statusCode, r.body.slice(0, 300)).toBe(201);
    expect(r.json().total_operations).toBeGreaterThan(100);
    // The import as a whole takes far longer than any pause it causes here (what is left: the request's JSON body,
    // the stored text's parse for the schema cache, the rows' insert).
    expect(worst).toBeLessThan(Math.max(250, ms / 3));
    expect((await t.req('GET', '/health')).statusCode).toBe(200);
  }, 60_000);
});

describe('the document loader', () => {
  it('refuses a document it cannot load within its deadline as too large, and loads the next one', async () => {
    const loader = new DocumentLoader({ timeoutMs: 400 });
    try {
      const big = readFileSync(join(CORPUS, 'openai__openapi.yaml'), 'utf8');
      await expect(loader.load('org-a', big)).rejects.toMatchObject({ code: 'too_large', message: expect.stringMatching(/longer than 400 ms/) });
      const tiny = { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: { '/a': { get: { responses: { '200': { description: 'ok' } } } } } };
      // The killed thread was replaced. Its first job runs cold code: on a loaded two-core machine that alone has
      // exceeded 400 ms, so the tiny document gets a second try; a pool that did not recover fails both.
      const small = await loader.load('org-a', tiny).catch(() => loader.load('org-a', tiny));
      expect(small.operations).toHaveLength(1);
    } finally {
      await loader.close();
    }
  }, 60_000);

  it('answers a refusal of the document as the same 422 as before', async () => {
    const loader = new DocumentLoader();
    try {
      await expect(loader.load('org-a', 'a: !!js/function "return 1"')).rejects.toMatchObject({ code: 'validation' });
    } finally {
      await loader.close();
    }
  }, 60_000);
});
