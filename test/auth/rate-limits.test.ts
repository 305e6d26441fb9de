import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateBucketsRepository } from '../../src/auth/rate-buckets.repository.js';
import { RateLimiter } from '../../src/auth/rate-limiter.js';
import { createContainer, type Container } from '../../src/container.js';
import { buildApiApp } from '../../src/http/api.app.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createAgent, enableWebhook, hook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * Rate limits (docs/access.md): token buckets per API key and per public webhook URL, shared by every process on the
 * database, answered with 429, the contract's error body and Retry-After. The refill rate here is one token per 100 s,
 * so nothing refills while a test runs; refilling is tested on the limiter with a clock the test moves.
 */
const SLOW = '0.01';

describe.each(TEST_DBS)('rate limits (%s)', (kind) => {
  describe('per API key', () => {
    let t: TestApp;
    let second: { c: Container; app: Awaited<ReturnType<typeof buildApiApp>> };
    beforeAll(async () => {
      t = await createTestApp(kind, { env: { AGENTRY_RATE_LIMIT_KEY_PER_SECOND: SLOW, AGENTRY_RATE_LIMIT_KEY_BURST: '6', AGENTRY_RATE_LIMIT_LEASE: '2' } });
      // Another process of the same deployment: its own container and caches, the same database.
      const c = await createContainer(t.config, { log: createLogger('silent') });
      second = { c, app: await buildApiApp(c) };
    });
    afterAll(async () => {
      await second?.app.close();
      await second?.c.close();
      await t?.close();
    });

    it('lets a key send its burst, then answers 429 with Retry-After and the error body', async () => {
      const { key } = await t.c.orgs.createApiKey('org-a', 'burst');
      const statuses: number[] = [];
      let refused;
      for (let i = 0; i < 10; i++) {
        const r = await t.req('GET', '/v1/agents', undefined, { 'x-api-key': key });
        statuses.push(r.statusCode);
        if (r.statusCode === 429) refused = r;
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
      expect(refused!.json()).toEqual({ detail: 'Rate limit exceeded; retry later' });
      // One token per 100 s: the next one is about 100 s away.
      expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(90);
      expect(Number(refused!.headers['retry-after'])).toBeLessThanOrEqual(100);
      // Other keys have their own buckets.
      expect((await t.req('GET', '/v1/agents')).statusCode).toBe(200);
    });

    it('shares one bucket between processes', async () => {
      const { key } = await t.c.orgs.createApiKey('org-a', 'shared');
      let ok = 0;
      for (let i = 0; i < 10; i++) {
        for (const app of [t.app, second.app]) {
          const r = await app.inject({ method: 'GET', url: '/v1/agents', headers: { 'x-api-key': key } });
          if (r.statusCode === 200) ok++;
          else expect(r.statusCode).toBe(429);
        }
      }
      // Each process spends what it leased before it is refused, so together they spend exactly the burst.
      expect(ok).toBe(6);
    });
  });

  describe('per public webhook URL', () => {
    let w: WebhookWorld;
    beforeAll(async () => {
      w = await startWebhookWorld(kind, { AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND: SLOW, AGENTRY_RATE_LIMIT_WEBHOOK_BURST: '3' });
      w.llm.handle(() => ({ text: 'ok' }));
    });
    afterAll(async () => w?.close());

    it('refuses calls past the burst with 429 before reading them, on both transports', async () => {
      const agent = await createAgent(w);
      const url = await enableWebhook(w, agent);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await hook(w, url, { json: { prompt: `call ${i}` } })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const lane = await hook(w, url, { json: { prompt: 'again' } });
      const form = await hook(w, url, { form: { prompt: 'as a form' } });
      for (const r of [lane, form]) {
        expect([r.status, r.json]).toEqual([429, { detail: 'Rate limit exceeded; retry later' }]);
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(90);
      }
      // Another agent's URL is another bucket; the key form is the key's.
      const other = await enableWebhook(w, await createAgent(w));
      expect((await hook(w, other, { json: { prompt: 'x' } })).status).toBe(200);
      expect((await hook(w, `/?agent_id=${agent}`, { json: { prompt: 'x', asynchronous: true }, headers: { 'x-api-key': w.keyA } })).status).toBe(200);
    });
  });

  describe('the limiter', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp(kind);
    });
    afterAll(async () => t?.close());

    it('refills with time and leases in batches, not a query per call', async () => {
      const clock = { ms: 1_000_000, now() {
        return this.ms;
      } };
      const repo = new RateBucketsRepository(t.c.db);
      let leases = 0;
      const counting = { lease: (...a: Parameters<RateBucketsRepository['lease']>) => (leases++, repo.lease(...a)) } as RateBucketsRepository;
      const limiter = new RateLimiter(counting, clock, 10, t.c.log);
      const spec = { perSecond: 2, burst: 100 };
      let ok = 0;
      for (let i = 0; i < 100; i++) await Promise.resolve(limiter.take(t.orgA, 'unit', spec)).then(() => ok++);
      expect(ok).toBe(100);
      expect(leases).toBeLessThanOrEqual(10);
      await expect(limiter.take(t.orgA, 'unit', spec)).rejects.toMatchObject({ code: 'rate_limited', retryAfter: 1 });
      // Refused from memory until the bucket has refilled: no query for a flood.
      const before = leases;
      for (let i = 0; i < 50; i++) await expect(limiter.take(t.orgA, 'unit', spec)).rejects.toMatchObject({ code: 'rate_limited' });
      expect(leases).toBe(before);
      // Two seconds later: four tokens.
      clock.ms += 2000;
      let later = 0;
      for (let i = 0; i < 10; i++) await Promise.resolve(limiter.take(t.orgA, 'unit', spec)).then(() => later++, () => undefined);
      expect(later).toBe(4);
    });

    it('grows the lease of a busy caller to a quarter second of a high limit, never beyond', async () => {
      const clock = { ms: 1_000_000, now() {
        return this.ms;
      } };
      const repo = new RateBucketsRepository(t.c.db);
      const wants: number[] = [];
      const counting = { lease: (...a: Parameters<RateBucketsRepository['lease']>) => (wants.push(a[2].want), repo.lease(...a)) } as RateBucketsRepository;
      const limiter = new RateLimiter(counting, clock, 10, t.c.log);
      const spec = { perSecond: 400_000, burst: 1_000_000 };
      let ok = 0;
      for (let i = 0; i < 300_000; i++) {
        const taken = limiter.take(t.orgA, 'busy', spec);
        if (taken) await taken;
        ok++;
        // 3,000 calls per simulated millisecond: a caller far above 64 leases' worth of tokens per 250 ms.
        if (i % 3000 === 0) clock.ms += 1;
      }
      expect(ok).toBe(300_000);
      // 640 tokens at most per lease would have taken ~470 leases.
      expect(wants.length).toBeLessThan(30);
      expect(Math.max(...wants)).toBe(100_000);
      // A modest limit keeps the earlier bound: 64 leases' worth (640 here), never more than the burst.
      const small = { perSecond: 1000, burst: 5000 };
      wants.length = 0;
      for (let i = 0; i < 4000; i++) {
        const taken = limiter.take(t.orgA, 'modest', small);
        if (taken) await taken;
      }
      expect(Math.max(...wants)).toBe(640);
    });
  });
});
