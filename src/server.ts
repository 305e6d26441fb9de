import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { buildApiApp } from './http/api.app.js';
import { buildWebhookApp } from './http/webhooks.app.js';
import { startMetricsListener } from './observability/metrics-listener.js';

export interface RunningServer {
  container: Container;
  api?: FastifyInstance;
  webhooks?: FastifyInstance;
  apiUrl?: string;
  webhookUrl?: string;
  stop(): Promise<void>;
}

/** Starts the roles named in the configuration. Port 0 binds a free port, which is logged and returned. */
export async function startServer(config: Config, container?: Container): Promise<RunningServer> {
  const c = container ?? (await createContainer(config));
  const running: RunningServer = { container: c, stop: async () => {} };
  if (config.roles.has('api')) {
    running.api = await buildApiApp(c);
    await running.api.listen({ host: config.host, port: config.apiPort });
    const port = (running.api.server.address() as AddressInfo).port;
    running.apiUrl = `http://${hostFor(config.host)}:${port}`;
    if (!config.publicApiUrl) c.urls.api = `http://localhost:${port}`;
    c.log.info({ port, role: 'api' }, `api listening on ${running.apiUrl}`);
    c.log.info({ console: `${c.urls.api}/`, docs: `${c.urls.api}/docs` }, `console at ${c.urls.api}/ , API reference at ${c.urls.api}/docs`);
  }
  if (config.roles.has('webhooks')) {
    running.webhooks = await buildWebhookApp(c);
    await running.webhooks.listen({ host: config.host, port: config.webhookPort });
    const port = (running.webhooks.server.address() as AddressInfo).port;
    running.webhookUrl = `http://${hostFor(config.host)}:${port}`;
    if (!config.publicWebhookUrl) c.urls.webhook = `http://localhost:${port}`;
    c.log.info({ port, role: 'webhooks' }, `webhook receiver listening on ${running.webhookUrl}`);
  }
  if (config.roles.has('worker')) {
    for (const b of c.background) await b.start();
    c.log.info({ role: 'worker' }, 'worker started');
  }
  const metricsListener = await startMetricsListener(c);
  running.stop = async () => {
    await metricsListener?.close();
    await running.api?.close();
    await running.webhooks?.close();
    await c.close();
  };
  return running;
}

function hostFor(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}
