import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { IndexedCounter, IndexedHistogram } from '../../src/observability/indexed-series.js';

/**
 * The request-path metrics (indexed-series.ts) stand in for prom-client's Histogram and Counter: scraped, they must
 * read exactly as prom-client's own would after the same observations, in the text format and as JSON.
 */
describe('request series', () => {
  const buckets = [0.001, 0.01, 0.1, 1];
  const observations: [string, string, number, number][] = [
    ['webhooks', '/wh_:secret', 200, 0.0004],
    ['webhooks', '/wh_:secret', 200, 0.001],
    ['webhooks', '/wh_:secret', 200, 0.05],
    ['webhooks', '/wh_:secret', 429, 0.002],
    ['api', '/v1/agents', 201, 3],
    ['api', '/v1/agents', 201, 0.5],
    ['api', 'say "hi"\\\n', 500, 0.01],
  ];

  function pair() {
    const theirs = new Registry();
    const ours = new Registry();
    const o = { name: 'x_duration_seconds', help: 'Durations, "quoted" \\ help', labelNames: ['listener', 'route', 'status'] };
    const h1 = new Histogram({ ...o, buckets, registers: [theirs] });
    const h2 = new IndexedHistogram({ ...o, buckets, registers: [ours] });
    const c1 = new Counter({ name: 'x_calls_total', help: 'Calls', labelNames: ['route', 'status'], registers: [theirs] });
    const c2 = new IndexedCounter({ name: 'x_calls_total', help: 'Calls', labelNames: ['route', 'status'], registers: [ours] });
    for (const [listener, route, status, v] of observations) {
      h1.observe({ listener, route, status: String(status) }, v);
      h2.observe([listener, route, status], v);
      c1.inc({ route, status: String(status) });
      c2.inc([route, status]);
    }
    return { theirs, ours };
  }

  it('reads as prom-client reads, line for line', async () => {
    const { theirs, ours } = pair();
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('x_duration_seconds_bucket{le="0.001",listener="webhooks",route="/wh_:secret",status="200"} 2');
    expect(text).toContain('x_duration_seconds_count{listener="webhooks",route="/wh_:secret",status="200"} 3');
    expect(text).toContain('x_calls_total{route="/wh_:secret",status="200"} 3');
  });

  it('gives the same JSON and starts over on reset', async () => {
    const { theirs, ours } = pair();
    const strip = (ms: { name: string; values: { labels: unknown; value: number; metricName?: string }[] }[]) =>
      ms.map((m) => ({ name: m.name, values: m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: v.metricName })) }));
    expect(strip((await ours.getMetricsAsJSON()) as never)).toEqual(strip((await theirs.getMetricsAsJSON()) as never));
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('does not record a duration that is not a number', async () => {
    const r = new Registry();
    const h = new IndexedHistogram({ name: 'y', help: 'y', labelNames: ['a'], buckets, registers: [r] });
    h.observe(['x'], Number.NaN);
    h.observe(['x'], Number.POSITIVE_INFINITY);
    h.bind(['x'])(Number.NaN);
    expect(await r.metrics()).not.toContain('y_count');
  });

  it('counts up by finite amounts only, as prom-client', async () => {
    const r = new Registry();
    const c = new IndexedCounter({ name: 't_total', help: 't', labelNames: ['type'], registers: [r] });
    c.inc(['input'], 120);
    for (const by of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => c.inc(['input'], by)).toThrow(/finite amount/);
    expect(await r.metrics()).toContain('t_total{type="input"} 120');
  });

  it('bound series read as observed ones, appear only once observed, and record again after a reset', async () => {
    const make = () => {
      const r = new Registry();
      const h = new IndexedHistogram({ name: 'z_seconds', help: 'z', labelNames: ['route', 'status'], buckets, registers: [r] });
      const c = new IndexedCounter({ name: 'z_total', help: 'z', labelNames: ['route', 'status'], registers: [r] });
      return { r, h, c };
    };
    const bound = make();
    const looked = make();
    const observeBound = bound.h.bind(['/wh_:secret', 200]);
    const countBound = bound.c.bind(['/wh_:secret', 200]);
    expect(await bound.r.metrics()).not.toContain('route=');
    for (const v of [0.0004, 0.05, 2]) {
      observeBound(v);
      countBound();
      looked.h.observe(['/wh_:secret', 200], v);
      looked.c.inc(['/wh_:secret', 200]);
    }
    // Another series beside the bound one, recorded by labels on both sides.
    bound.h.observe(['/', 429], 0.002);
    looked.h.observe(['/', 429], 0.002);
    expect(await bound.r.metrics()).toBe(await looked.r.metrics());
    bound.r.resetMetrics();
    looked.r.resetMetrics();
    observeBound(0.003);
    countBound();
    looked.h.observe(['/wh_:secret', 200], 0.003);
    looked.c.inc(['/wh_:secret', 200]);
    const text = await bound.r.metrics();
    expect(text).toBe(await looked.r.metrics());
    expect(text).toContain('z_total{route="/wh_:secret",status="200"} 1');
  });
});
