import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { RunningServer } from '../src/server.js';
import { launchChromium } from './console/browser-harness.js';
import { createTestEnv, startTestServer, type TestEnv } from './support/harness.js';

/**
 * GET /docs: the API reference renders /openapi.json in a real browser under its content security policy (no
 * violation, no page error), and nothing of swagger-ui-dist beyond the files the page uses is served.
 * The database plays no part here: libsql only.
 */
describe('API reference at /docs', () => {
  let env: TestEnv;
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    server = await startTestServer(env, { AGENTRY_ROLES: 'api' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    // Keep-alive sockets left from the browser keep Fastify's close waiting (seen here, not in production paths
    // we changed): drop them so the listener closes.
    server?.api?.server.closeAllConnections();
    await server?.stop();
    await env?.cleanup();
  });

  it('serves the page with its own policy and only the files it uses', async () => {
    const page = await fetch(`${server.apiUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self';");
    expect(await page.text()).toContain('/docs/docs-init.js');
    for (const path of ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/docs-init.js']) expect((await fetch(`${server.apiUrl}${path}`)).status).toBe(200);
    for (const path of ['/docs/assets/package.json', '/docs/assets/index.html', '/docs/assets/../package.json', '/docs/index.html', '/docs/assets/']) {
      expect((await fetch(`${server.apiUrl}${path}`)).status).toBe(404);
    }
  });

  it('renders every tag of the API in a browser without a policy violation or a page error', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${server.apiUrl}/docs`);
    await page.waitForSelector('.opblock-tag', { timeout: 30_000 });
    const tags = await page.$$eval('.opblock-tag', (els) => els.map((e) => e.getAttribute('data-tag')));
    expect(tags).toEqual(expect.arrayContaining(['agents', 'tasks', 'connectors', 'knowledge', 'webhook receiver']));
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
