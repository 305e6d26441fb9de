import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, createTestEnv, startTestServer, type TestApp } from '../support/harness.js';
import type { RunningServer } from '../../src/server.js';

/** The observability settings act: metrics off, metrics on their own port, no tracer without an endpoint. libsql only. */
describe('observability settings', () => {
  let t: TestApp | undefined;
  let server: RunningServer | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await t?.close();
    await server?.stop();
    await cleanup?.();
    t = server = cleanup = undefined;
  });

  it('AGENTRY_METRICS=false removes /metrics; without an OTLP endpoint there is no tracer', async () => {
    t = await createTestApp('sqlite', { env: { AGENTRY_METRICS: 'false' } });
    expect(t.c.metrics).toBeUndefined();
    expect(t.c.tracing).toBeUndefined();
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('AGENTRY_METRICS_PORT serves /metrics (and nothing else) on a listener of its own, for a worker-only process', async () => {
    const env = await createTestEnv('sqlite');
    cleanup = env.cleanup;
    // Port 0 would be unknowable from outside: pick one the OS just freed.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    server = await startTestServer(env, { AGENTRY_ROLES: 'worker', AGENTRY_METRICS_PORT: String(port), AGENTRY_METRICS_TOKEN: 'token-for-the-metrics-port' });
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const r = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer token-for-the-metrics-port' } });
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('agentry_tasks{status="pending"} 0');
    expect((await fetch(`${base}/v1/agents`, { headers: { authorization: 'Bearer token-for-the-metrics-port' } })).status).toBe(404);
  });

  it('reads the OTLP settings as the OpenTelemetry specification defines them', () => {
    const base = { AGENTRY_DATA_DIR: '/nonexistent' };
    expect(loadConfig(base).otel).toBeUndefined();
    // An empty value is an unset one (compose passes `${VAR:-}` through as '').
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: '' }).otel).toBeUndefined();
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=a%20b, team=ops' }).otel).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: { 'x-key': 'a b', team: 'ops' },
      serviceName: 'agentry',
      captureContent: false,
    });
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/custom' }).otel?.tracesUrl).toBe('http://t:4318/custom');
    expect(() => loadConfig({ ...base, AGENTRY_LOG_FORMAT: 'xml' })).toThrow(/AGENTRY_LOG_FORMAT/);
  });
});
