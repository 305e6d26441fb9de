/**
 * Child processes the benchmark runs, each on its own: the load generator must not share an event loop with
 * the server it measures, nor with the scripted LLM.
 *
 *   node --import tsx bench/children.ts bare          a bare node:http server answering constants (the ceiling)
 *   node --import tsx bench/children.ts instant-llm   an OpenAI-compatible server answering at once, or after
 *                                                     BENCH_LLM_DELAY_MS (a real provider takes about a second)
 *   node --import tsx bench/children.ts fastify       Fastify answering the webhook route with a constant: what the
 *                                                     framework alone costs, before any of the service's work
 *   node --import tsx bench/children.ts minimal-sync  the least a durable synchronous webhook can do: one streamed
 *                                                     call to the LLM, one committed row, then the answer (the floor
 *                                                     of scenario 2; BENCH_FLOOR_LLM_URL, BENCH_FLOOR_DB)
 *   node --import tsx bench/children.ts minimal-accept the least a durable asynchronous accept can do: one row per
 *                                                     call, committed in groups, then the answer (the floor of
 *                                                     scenario 1; BENCH_FLOOR_DB)
 *
 * Each prints one JSON line `{"url": ...}` on stdout when it listens.
 */
import http, { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startOpenAIServer } from '../test/fakes/openai-server.js';

const STARTED = JSON.stringify({ status: 'Started' });
const AGENT = JSON.stringify({ id: '00000000-0000-7000-8000-000000000000', name: 'x', version: 2 });
const RESULT = JSON.stringify({ id: 't', agent_id: 'a', status: 'completed', result: 'Done.', source: 'webhook', execution_attempts: 1 });

async function bare(): Promise<void> {
  // The same route shapes as the service, answered with a constant after reading the body.
  // `PUT /__schema` sets what `/schema` answers: the service's real schema bytes, so the ceiling sends as much.
  let schema = RESULT;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'PUT' && req.url === '/__schema') {
        schema = Buffer.concat(chunks).toString();
        return void res.writeHead(204).end();
      }
      const body = req.url?.startsWith('/wh_') ? STARTED : req.url?.startsWith('/v1/agents') ? AGENT : req.url?.startsWith('/schema') ? schema : RESULT;
      res.writeHead(req.url?.startsWith('/v1/agents') ? 201 : 200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }) + '\n');
}

async function fastifyConstant(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.post('/wh_:secret', async (_req, reply) => reply.code(200).type('application/json').send(STARTED));
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }) + '\n');
}

async function instantLlm(): Promise<void> {
  const llm = await startOpenAIServer();
  const delayMs = Number(process.env.BENCH_LLM_DELAY_MS ?? 0);
  llm.handle(() => ({ text: 'Done.', ...(delayMs > 0 ? { delayMs } : {}) }));
  // The fake records every request for tests; a benchmark would grow it without bound.
  setInterval(() => llm.requests.splice(0), 1000).unref();
  process.stdout.write(JSON.stringify({ url: llm.baseUrl }) + '\n');
}

/**
 * Per request: the streamed LLM call the service makes (read to its end), then one row with the request and the
 * answer committed as durably as the service commits (PostgreSQL: synchronous commit; libsql: WAL with
 * synchronous=NORMAL, the service's pragmas), then the answer. No auth, no trace, no task state machine.
 */
async function minimalSync(): Promise<void> {
  const llmUrl = new URL(`${process.env.BENCH_FLOOR_LLM_URL}/chat/completions`);
  const target = process.env.BENCH_FLOOR_DB ?? '';
  const commit = target.startsWith('postgres') ? await pgCommitter(target) : await sqliteCommitter(target);
  const agent = new http.Agent({ keepAlive: true });
  const llmBody = JSON.stringify({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
  const callLlm = () =>
    new Promise<string>((resolve, reject) => {
      const req = http.request(llmUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer x' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end(llmBody);
    });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      callLlm()
        .then((answer) => commit(Buffer.concat(chunks).toString(), answer))
        .then(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end(RESULT),
          (e: Error) => res.writeHead(500).end(e.message),
        );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }) + '\n');
}

/**
 * Per request: read the body, commit one row holding it (with an id and the time, as a task would have), answer
 * `{"status":"Started"}`. Rows are committed in groups, one write in flight at a time, and every row that arrives
 * during a write goes into the next: without that, a durable accept is one fsync per request. This is the design
 * that measured fastest (one, two and four writes in flight: see docs/benchmarks.md, run 17); it is written here
 * from scratch, not imported from src/, so that the floor does not inherit the service's choices.
 */
async function minimalAccept(): Promise<void> {
  const target = process.env.BENCH_FLOOR_DB ?? '';
  const write = target.startsWith('postgres') ? await pgAppender(target) : await sqliteAppender(target);
  let queue: { row: string; done: (ok: boolean) => void }[] = [];
  let writing = false;
  const flush = async (): Promise<void> => {
    writing = true;
    while (queue.length) {
      const batch = queue;
      queue = [];
      const ok = await write(batch.map((b) => b.row)).then(() => true, () => false);
      for (const b of batch) b.done(ok);
    }
    writing = false;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const row = JSON.stringify({ id: randomUUID(), request: Buffer.concat(chunks).toString(), created_at: new Date().toISOString() });
      queue.push({ row, done: (ok) => (ok ? res.writeHead(200, { 'content-type': 'application/json' }).end(STARTED) : res.writeHead(500).end()) });
      // Next turn of the event loop: every request parsed in this one joins the same write.
      if (!writing && queue.length === 1) setImmediate(() => void (writing || flush()));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }) + '\n');
}

type Appender = (rows: string[]) => Promise<unknown>;

async function pgAppender(url: string): Promise<Appender> {
  const client = await floorPg(url, 'create table if not exists bench_floor_inbox (seq bigint generated by default as identity primary key, row text not null)');
  // One statement whatever the number of rows (one array parameter), so it is prepared once.
  return (rows) => client.query({ name: 'floor_append', text: 'insert into bench_floor_inbox (row) select unnest($1::text[])', values: [rows] });
}

async function sqliteAppender(file: string): Promise<Appender> {
  const db = await floorSqlite(file, 'create table if not exists bench_floor_inbox (seq integer primary key, row text not null)');
  const insert = db.prepare('insert into bench_floor_inbox (row) values (?)');
  const append = db.transaction((rows: string[]) => rows.forEach((r) => insert.run(r)));
  return async (rows) => append(rows);
}

type Committer = (request: string, answer: string) => Promise<unknown>;

async function pgCommitter(url: string): Promise<Committer> {
  const client = await floorPg(url, 'create table if not exists bench_floor_runs (id bigserial primary key, request text not null, answer text not null)');
  return (request, answer) => client.query({ name: 'floor_insert', text: 'insert into bench_floor_runs (request, answer) values ($1, $2)', values: [request, answer] });
}

async function sqliteCommitter(file: string): Promise<Committer> {
  const db = await floorSqlite(file, 'create table if not exists bench_floor_runs (id integer primary key, request text not null, answer text not null)');
  const insert = db.prepare('insert into bench_floor_runs (request, answer) values (?, ?)');
  return async (request, answer) => insert.run(request, answer);
}

/** A floor's PostgreSQL connection, with its table: synchronous commit, as the service commits (the default). */
async function floorPg(url: string, createTable: string) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(createTable);
  return client;
}

/** A floor's libsql database, with its table: WAL with synchronous=NORMAL, the service's pragmas. */
async function floorSqlite(file: string, createTable: string) {
  const { default: Database } = await import('libsql');
  const db = new Database(file);
  db.exec('pragma journal_mode = wal; pragma synchronous = normal');
  db.exec(createTable);
  return db;
}

const which = process.argv[2];
if (which === 'bare') await bare();
else if (which === 'instant-llm') await instantLlm();
else if (which === 'fastify') await fastifyConstant();
else if (which === 'minimal-sync') await minimalSync();
else if (which === 'minimal-accept') await minimalAccept();
else {
  process.stderr.write('usage: children.ts bare|instant-llm|fastify|minimal-sync|minimal-accept\n');
  process.exit(2);
}
