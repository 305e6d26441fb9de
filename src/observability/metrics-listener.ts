import type { AddressInfo } from 'node:net';
import type { Container } from '../container.js';
import { createMetricsServer } from './metrics-http.js';

/** AGENTRY_METRICS_PORT: /metrics on a listener of its own (a worker-only process has no other). */
export async function startMetricsListener(c: Container): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const port = c.config.metrics.port;
  if (!c.metrics || port === undefined) return undefined;
  const server = createMetricsServer(c.metrics, c.config.metrics.token);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, c.config.host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  c.log.info({ port: bound, role: 'metrics' }, `metrics listening on port ${bound}`);
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
