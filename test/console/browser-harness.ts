import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startOpenAIServer, type RecordedRequest, type ScriptedLlmServer, type ScriptedReply } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { createTestEnv, startTestServer, type DbKind, type TestEnv } from '../support/harness.js';
import type { RunningServer } from '../../src/server.js';
import type { Task } from '../../src/tasks/task.types.js';

/**
 * A whole Agentry (api, webhook receiver and worker on real sockets) with a scripted LLM, and Debian's Chromium
 * driven by playwright-core: what the console's browser tests need.
 */
export const CHROMIUM = process.env.AGENTRY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is needed for the console's browser tests: apt-get install -y chromium (looked for ${CHROMIUM})`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * The scripted model answers by markers in the prompt, so tests running side by side do not share a queue:
 *   [gate:NAME]  waits until the test opens the gate, then answers
 *   [hang]       answers after two minutes, or never (a stop aborts the call first)
 *   [tool:NAME]  calls tool NAME once with {text: <prompt>} (or the arguments set with argsFor), then answers with
 *                what the tool returned
 *   otherwise    answers at once with a short Markdown text
 */
export class ScriptedModel {
  private gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  private aliases: [string, string][] = [];
  private toolArgs = new Map<string, Record<string, unknown>>();
  constructor(readonly server: ScriptedLlmServer) {
    server.handle((req) => this.answer(req));
  }

  gate(name: string): { promise: Promise<void>; open: () => void } {
    let g = this.gates.get(name);
    if (!g) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      g = { promise, open };
      this.gates.set(name, g);
    }
    return g;
  }

  /** Treats prompts containing `phrase` as if they carried `markers` (screenshots read better without markers). */
  when(phrase: string, markers: string): void {
    this.aliases.push([phrase, markers]);
  }

  /** `[tool:NAME]` calls NAME with these arguments instead of {text: <prompt>} (tools with their own schema). */
  argsFor(tool: string, args: Record<string, unknown>): void {
    this.toolArgs.set(tool, args);
  }

  openAll(): void {
    for (const g of this.gates.values()) g.open();
  }

  private async answer(req: RecordedRequest): Promise<ScriptedReply> {
    const text = [req.lastUserText, ...this.aliases.filter(([p]) => req.lastUserText.includes(p)).map(([, m]) => m)].join(' ');
    const gate = /\[gate:(\w+)\]/.exec(text);
    if (gate) await this.gate(gate[1]).promise;
    if (text.includes('[hang]')) return { text: 'too late', delayMs: 120_000 };
    const tool = /\[tool:(\w+)\]/.exec(text);
    if (tool) {
      const messages: { role: string; content: unknown }[] = req.body.messages ?? [];
      const result = messages.filter((m) => m.role === 'tool').at(-1);
      if (!result) return { toolCalls: [{ name: tool[1], arguments: this.toolArgs.get(tool[1]) ?? { text: text.replace(/\[[^\]]*\]/g, '').trim() } }], usage: { prompt_tokens: 120, completion_tokens: 12 } };
      return { text: `## Counted\n\nThe tool answered **${String(result.content)}**.`, usage: { prompt_tokens: 160, completion_tokens: 24 } };
    }
    return { text: `Done: *${text.slice(0, 40)}*` };
  }
}

export interface ConsoleWorld {
  kind: DbKind;
  env: TestEnv;
  server: RunningServer;
  apiUrl: string;
  model: ScriptedModel;
  llm: ScriptedLlmServer;
  key: string;
  browser: Browser;
  /** Uncaught script errors and security-policy violations in any page: a test fails if there are any. */
  pageErrors: string[];
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  createAgent(fields?: Record<string, unknown>): Promise<{ id: string; name: string; webhook_url: string }>;
  waitTask(id: string, done: (t: Task) => boolean, timeoutMs?: number): Promise<Task>;
  /** A fresh page (own session storage, 1280x900 unless told) signed in through the form. */
  signedInPage(context?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

/**
 * For suites whose tests each open their own pages: `open()` gives a signed-in page, `track(page)` takes one the test
 * made itself; after each test they are closed, and the test fails if any page reported an error.
 */
export function pagesPerTest(world: () => ConsoleWorld): { open(): Promise<Page>; track(page: Page): Page } {
  const pages: Page[] = [];
  const track = (page: Page) => {
    pages.push(page);
    return page;
  };
  afterEach(async () => {
    for (const p of pages.splice(0)) await p.context().close();
    expect(world().pageErrors).toEqual([]);
  });
  return { open: async () => track(await world().signedInPage()), track };
}

/**
 * A console suite's world: started in beforeAll (up to 90 s on a loaded machine) and handed to `use`, stopped in
 * afterAll. A suite that keeps one page across its tests passes a getter of it as `page`: afterAll is then
 * endConsoleWorld (the page closed, the suite failed if any page reported an error). beforeAll hooks registered after
 * this call (seeding, other servers) run after the world has started.
 */
export function consoleWorldPerSuite(kind: DbKind, use: (w: ConsoleWorld) => void, opts: { page?: () => Page | undefined } = {}): void {
  let world: ConsoleWorld | undefined;
  beforeAll(async () => {
    world = await startConsoleWorld(kind);
    use(world);
  }, 90_000);
  afterAll(async () => (opts.page ? endConsoleWorld(world, opts.page()) : world?.close()));
}

/** A suite's teardown: closes its page, requires that no page reported an error, and stops the world. */
export async function endConsoleWorld(w: ConsoleWorld | undefined, page: Page | undefined): Promise<void> {
  await page?.context().close();
  expect(w?.pageErrors ?? []).toEqual([]);
  await w?.close();
}

export async function startConsoleWorld(kind: DbKind): Promise<ConsoleWorld> {
  // A short lease (as in the tasks tests) keeps a task whose worker lost it from waiting long to be run again.
  const env = await createTestEnv(kind, { AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_TASK_LEASE_MS: '2000' });
  const [llm, browser] = await Promise.all([startOpenAIServer(), launchChromium()]);
  const server = await startTestServer(env);
  const model = new ScriptedModel(llm);
  const { key } = await server.container.orgs.createApiKey('console-org', 'test');
  const apiUrl = server.apiUrl!;
  let n = 0;

  const api: ConsoleWorld['api'] = async (method, path, body) => {
    const r = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };

  const world: ConsoleWorld = {
    kind,
    env,
    server,
    apiUrl,
    model,
    llm,
    key,
    browser,
    pageErrors: [],
    api,
    async createAgent(fields = {}) {
      const r = await api('POST', '/v1/agents', scriptedAgentFields(llm.baseUrl, { name: `Console agent ${++n}`, ...fields }));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    },
    async waitTask(id, done, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await api<Task>('GET', `/v1/tasks/${encodeURIComponent(id)}`);
        if (r.status === 200 && done(r.body)) return r.body;
        if (Date.now() > end) throw new Error(`task ${id}: ${r.status} ${JSON.stringify(r.body)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    },
    async signedInPage(options = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
      const page = await context.newPage();
      page.on('pageerror', (e) => world.pageErrors.push(e.message));
      // Anything the page's security policy had to block is a bug in the console (an inline style, a foreign URL).
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) world.pageErrors.push(m.text());
      });
      await page.goto(`${apiUrl}/`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      return page;
    },
    async close() {
      // Open gates so no scripted answer is left waiting, then stop everything.
      model.openAll();
      await browser.close().catch(() => {});
      await server.stop();
      await llm.close();
      await env.cleanup();
    },
  };
  return world;
}

/** The webhook base as the server reports it names "localhost"; the test talks to the address it listens on. */
export function reachable(url: string, server: RunningServer): string {
  const u = new URL(url);
  const actual = new URL(server.webhookUrl!);
  u.protocol = actual.protocol;
  u.host = actual.host;
  return u.toString();
}
