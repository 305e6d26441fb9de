import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestApp as FullTestApp } from '../support/harness.js';

/** What the helpers need of an app: createTestApp's and the tasks harness's both fit. */
type TestApp = Pick<FullTestApp, 'app' | 'keyA' | 'req'>;

export const CORPUS_DIR = join(import.meta.dirname, '..', 'fixtures', 'corpus');
export const CORPUS_FILES = ['constitution.md', 'bill-of-rights.md', 'planets.csv'];

export interface Question {
  question: string;
  answer: string;
}

export const QUESTIONS: Question[] = JSON.parse(readFileSync(join(CORPUS_DIR, 'questions.json'), 'utf8'));

/** A multipart/form-data body with one part per file. */
export function multipart(files: { name: string; content: string | Buffer; field?: string }[]): { payload: Buffer; contentType: string } {
  const boundary = `----agentry${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'files'}"; filename="${f.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`));
    parts.push(Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function createKb(t: TestApp, name = 'Corpus'): Promise<string> {
  const r = await t.req('POST', '/v1/knowledge', { name, description: 'test corpus' });
  if (r.statusCode !== 201) throw new Error(`create kb: ${r.statusCode} ${r.body}`);
  return r.json().id;
}

export async function uploadFiles(t: TestApp, kbId: string, files: { name: string; content: string | Buffer }[]) {
  const { payload, contentType } = multipart(files);
  return t.app.inject({ method: 'POST', url: `/v1/knowledge/${kbId}/documents`, payload, headers: { 'x-api-key': t.keyA, 'content-type': contentType } });
}

/** Uploads the committed corpus and waits until every document is ready. */
export async function loadCorpus(t: TestApp, kbId: string): Promise<void> {
  const r = await uploadFiles(t, kbId, CORPUS_FILES.map((name) => ({ name, content: readFileSync(join(CORPUS_DIR, name)) })));
  if (r.statusCode !== 201) throw new Error(`upload: ${r.statusCode} ${r.body}`);
  const docs = await waitForDocuments(t, kbId);
  const bad = docs.filter((d) => d.status !== 'ready');
  if (bad.length) throw new Error(`documents not ready: ${JSON.stringify(bad)}`);
}

/** Polls the documents list until no document is queued or indexing (the indexer must be running). */
export async function waitForDocuments(t: TestApp, kbId: string, timeoutMs = 30_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.req('GET', `/v1/knowledge/${kbId}/documents?per_page=50`);
    const items = r.json().items as any[];
    if (items.length && items.every((d) => d.status === 'ready' || d.status === 'error')) return items;
    if (Date.now() > deadline) throw new Error(`documents still pending: ${JSON.stringify(items.map((d) => [d.name, d.status, d.status_reason]))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface DocServer {
  url: string;
  requests: string[];
  /** Path -> response; a function may hold the response (to kill a worker mid-fetch). */
  routes: Map<string, (req: IncomingMessage, res: ServerResponse) => void>;
  close(): Promise<void>;
}

/** A document host on 127.0.0.1 (reachable only with AGENTRY_EGRESS_ALLOW=127.0.0.1). */
export async function startDocServer(): Promise<DocServer> {
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const route = routes.get(req.url ?? '');
    if (route) return route(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function serve(contentType: string, body: string | Buffer) {
  return (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': contentType }).end(body);
}
