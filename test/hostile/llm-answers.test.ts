import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedAgentFields } from '../support/agents.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * An agent's `llm_api_base` is the tenant's choice, and the SDKs read an answer without a limit: an event stream whose
 * event never ends (data lines, never the blank line) was buffered whole, 0.9 GB on one call in a probe, for as long
 * as the endpoint kept sending. Now one event (or one whole answer) past 32 MiB fails the run and the body is closed.
 * Both paths: the OpenAI-compatible direct stream (llm/chat-completions-stream.ts) and an SDK provider (Anthropic).
 * What is bounded is the client, not the database: one database.
 */

const MiB = 1 << 20;

describe('an LLM endpoint whose answer never ends', () => {
  let t: TasksApp;
  let endless: Server;
  let base: string;
  let sent = 0;
  const open = new Set<string>();

  beforeAll(async () => {
    endless = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"');
      const line = Buffer.concat([Buffer.from('data: '), Buffer.alloc(MiB, 97), Buffer.from('\n')]);
      open.add(req.url!);
      const timer = setInterval(() => {
        res.write(line);
        sent += line.length;
      }, 40);
      res.on('close', () => {
        clearInterval(timer);
        open.delete(req.url!);
      });
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
    t = await createTasksApp('sqlite', { env: { AGENTRY_SYNC_TIMEOUT_MS: '20000' } });
  });
  afterAll(async () => {
    endless?.closeAllConnections();
    await new Promise((r) => endless?.close(r));
    await t?.close();
  });

  for (const provider of ['openai', 'anthropic']) {
    it(`fails the run past 32 MiB and stops reading (${provider})`, async () => {
      sent = 0;
      const id = await t.createAgent(scriptedAgentFields(`${base}/${provider}`, { model_provider: provider }));
      const r = await t.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'hi' } });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().status).toBe('error');
      expect(r.json().result).toContain('larger than 32 MiB');
      await expect.poll(() => [...open].some((u) => u.startsWith(`/${provider}`))).toBe(false);
      expect(sent).toBeLessThan(64 * MiB);
    }, 40_000);
  }
});
