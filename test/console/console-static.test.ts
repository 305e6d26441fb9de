import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ROOT } from '../../src/console/console.plugin.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(join(dir, d.name)) : [join(dir, d.name)]));
}

describe.each(TEST_DBS)('console static files (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('GET / serves the console page without a key, under a strict content security policy', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    expect(r.body).toContain('<script type="module" src="/console/js/main.js">');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
  });

  it('serves every asset the page references, with its content type, and nothing from another origin', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/' })).body;
    const refs = [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref.startsWith('/console/'), ref).toBe(true);
      const r = await t.app.inject({ method: 'GET', url: ref });
      expect(r.statusCode, ref).toBe(200);
    }
    expect((await t.app.inject({ method: 'GET', url: '/console/app.css' })).headers['content-type']).toMatch(/^text\/css/);
    expect((await t.app.inject({ method: 'GET', url: '/console/js/main.js' })).headers['content-type']).toMatch(/javascript/);
  });

  it('every module import resolves to a served file (the browser would fail on a missing one)', async () => {
    const modules = filesUnder(join(CONSOLE_ROOT, 'js')).filter((f) => f.endsWith('.js'));
    for (const file of modules) {
      const url = `/console/${relative(CONSOLE_ROOT, file).split('\\').join('/')}`;
      const r = await t.app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(200);
      for (const m of readFileSync(file, 'utf8').matchAll(/^import [^'"]*['"](\.[^'"]+)['"]/gm)) {
        const target = new URL(m[1], `http://x${url}`).pathname;
        expect((await t.app.inject({ method: 'GET', url: target })).statusCode, `${url} imports ${target}`).toBe(200);
      }
      // No module may reach another origin at run time.
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/(?:import|fetch)\s*\(?\s*['"`]https?:/);
    }
  });

  it('answers 404 for missing files, directory listings, type declarations and paths that leave the console', async () => {
    for (const url of ['/console/nope.js', '/console/', '/console/js/', '/console/js/markdown.d.ts', '/console/../package.json', '/console/%2e%2e/%2e%2e/package.json']) {
      const r = await t.app.inject({ method: 'GET', url });
      expect([403, 404], url).toContain(r.statusCode);
      expect(r.body, url).not.toContain('"dependencies"');
    }
  });

  it('leaves the API as it was: /v1 still demands a key and /health still answers', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/agents' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toBe('ok');
    const api = await t.req('GET', '/v1/agents');
    expect(api.statusCode).toBe(200);
    // API answers are not given the console's page policy headers.
    expect(api.headers['content-security-policy']).toBeUndefined();
  });
});
