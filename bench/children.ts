/**
 * Child processes the benchmark runs, each on its own: the load generator must not share an event loop with
 * the server it measures, nor with the scripted LLM.
 *
 *   node --import tsx bench/children.ts bare          a bare node:http server answering constants (the ceiling)
 *   node --import tsx bench/children.ts instant-llm   an OpenAI-compatible server answering at once
 *   node --import tsx bench/children.ts fastify       Fastify answering the webhook route with a constant: what the
 *                                                     framework alone costs, before any of the service's work
 *
 * Each prints one JSON line `{"url": ...}` on stdout when it listens.
 */
import { createServer } from 'node:http';
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
  llm.handle(() => ({ text: 'Done.' }));
  // The fake records every request for tests; a benchmark would grow it without bound.
  setInterval(() => llm.requests.splice(0), 1000).unref();
  process.stdout.write(JSON.stringify({ url: llm.baseUrl }) + '\n');
}

const which = process.argv[2];
if (which === 'bare') await bare();
else if (which === 'instant-llm') await instantLlm();
else if (which === 'fastify') await fastifyConstant();
else {
  process.stderr.write('usage: children.ts bare|instant-llm|fastify\n');
  process.exit(2);
}
