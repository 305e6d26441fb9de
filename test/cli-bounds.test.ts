import { execFile } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The remote commands (`agentry agents|invoke|tasks|keys`) against a server that stalls or answers without end, as
 * real processes: each ends within its bound (AGENTRY_CLI_TIMEOUT_MS, a stream's silence, 64 MiB) with exit code 1
 * and a message naming the URL, never the API key. Before, they waited for ever or grew without end.
 */

const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);
const KEY = 'agk_secret_key_of_the_cli_test';

function streamForever(res: ServerResponse, contentType: string, start: string): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  res.writeHead(200, { 'content-type': contentType });
  res.write(start);
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

describe('remote commands against a misbehaving server', () => {
  let url = '';
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const [, mode] = (req.url ?? '/').split('/');
    // /stall/v1/...: never answers. /slow/...: headers and a start, then nothing. /endless/...: an answer without end.
    if (mode === 'stall') return;
    const sse = /event-stream/.test(String(req.headers.accept));
    if (mode === 'slow') {
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      res.write(sse ? 'data: {"type":"task_created"}\n\n' : '{"items":[');
      return;
    }
    // An event stream's one event (no blank line ever), or a JSON answer, without end.
    if (mode === 'endless') return streamForever(res, sse ? 'text/event-stream' : 'application/json', sse ? 'data: ' : '{"items":[');
    res.writeHead(404).end();
  });

  const cli = (args: string[], mode: string, timeoutMs = '1000') =>
    run(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, AGENTRY_URL: `${url}/${mode}`, AGENTRY_API_KEY: KEY, AGENTRY_CLI_TIMEOUT_MS: timeoutMs },
    });

  /** The failed command's exit code and stderr, and how long it ran. */
  async function failure(p: Promise<unknown>): Promise<{ code: number; stderr: string; ms: number }> {
    const started = performance.now();
    const e = (await p.then(
      () => ({ code: 0, stderr: '' }),
      (x: { code: number; stderr: string }) => x,
    )) as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr, ms: performance.now() - started };
  }

  beforeAll(async () => {
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  // A process start (tsx) takes 1-3 s on this machine; the bound is 1 s.
  const WITHIN = 8000;

  it('a request that is never answered, or whose answer stops, fails after AGENTRY_CLI_TIMEOUT_MS naming the URL', async () => {
    const [stalled, slow, invoke] = await Promise.all([
      failure(cli(['agents', 'list'], 'stall')),
      failure(cli(['tasks', 'list'], 'slow')),
      failure(cli(['invoke', 'a1', 'hello'], 'stall')),
    ]);
    expect(stalled).toMatchObject({ code: 1, stderr: `agentry: ${url}/stall/v1/agents did not answer within 1 s (AGENTRY_CLI_TIMEOUT_MS)\n` });
    expect(slow).toMatchObject({ code: 1, stderr: `agentry: ${url}/slow/v1/tasks did not answer within 1 s (AGENTRY_CLI_TIMEOUT_MS)\n` });
    expect(invoke).toMatchObject({ code: 1, stderr: `agentry: ${url}/stall/v1/agents/a1/invoke did not answer within 1 s (AGENTRY_CLI_TIMEOUT_MS)\n` });
    for (const f of [stalled, slow, invoke]) {
      expect(f.ms).toBeLessThan(WITHIN);
      expect(f.stderr).not.toContain(KEY);
    }
  }, 30_000);

  it('a stream whose headers never come fails after the timeout; one that falls silent, after the same bound of silence', async () => {
    const [stalled, silent] = await Promise.all([failure(cli(['invoke', 'a1', 'hello', '--stream'], 'stall')), failure(cli(['invoke', 'a1', 'hello', '--stream'], 'slow'))]);
    expect(stalled).toMatchObject({ code: 1, stderr: `agentry: ${url}/stall/v1/agents/a1/invoke/stream did not answer within 1 s (AGENTRY_CLI_TIMEOUT_MS)\n` });
    expect(silent).toMatchObject({ code: 1, stderr: `agentry: ${url}/slow/v1/agents/a1/invoke/stream streamed nothing for 1 s (no keep-alive either)\n` });
    for (const f of [stalled, silent]) expect(f.ms).toBeLessThan(WITHIN);
  }, 30_000);

  it('an answer, or one streamed event, past 64 MiB fails at the bound', async () => {
    const [json, event] = await Promise.all([failure(cli(['agents', 'list'], 'endless', '60000')), failure(cli(['invoke', 'a1', 'hello', '--stream'], 'endless', '60000'))]);
    expect(json).toMatchObject({ code: 1, stderr: `agentry: the answer of ${url}/endless/v1/agents is larger than 64 MiB\n` });
    expect(event).toMatchObject({ code: 1, stderr: `agentry: one event of ${url}/endless/v1/agents/a1/invoke/stream is larger than 64 MiB\n` });
    for (const f of [json, event]) expect(f.ms).toBeLessThan(20_000);
  }, 60_000);

  it('refuses a timeout that is not a whole number of milliseconds (exit 2)', async () => {
    expect(await failure(cli(['agents', 'list'], 'stall', 'soon'))).toMatchObject({
      code: 2,
      stderr: 'agentry: AGENTRY_CLI_TIMEOUT_MS must be a whole number of milliseconds, at least 100 (got "soon")\n',
    });
  });
});
