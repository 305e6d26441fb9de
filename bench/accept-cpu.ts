/**
 * CPU per asynchronous webhook accept, in process, without HTTP: what the service's own JavaScript costs per call
 * (public-URL lookup, parameters, the task row, the inbox append with its share of the group commit), as opposed to
 * what node:http and the kernel cost around it. 64 calls in flight, like scenario 1 at 64 connections.
 *
 *   npx tsx bench/accept-cpu.ts [sqlite|postgres] [seconds per round]
 *
 * Prints process CPU time per call for three rounds after a warm-up round. CPU time moves less than throughput on a
 * busy machine, but not nothing: compare runs taken one after the other.
 */
import { createTestApp } from '../test/support/harness.js';
import { cpuRound } from './lib.js';

const kind = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const seconds = Number(process.argv[3] ?? 5);
const IN_FLIGHT = 64;

const t = await createTestApp(kind);
const agentId = await t.createAgent({ model_provider: 'openai', model_name: 'bench', llm_api_base: 'http://127.0.0.1:9/v1', llm_credentials: { name: 'bench', value: 'sk-bench' } });
const secret = new URL((await t.req('POST', `/v1/agents/${agentId}/webhook`)).json().url).pathname.slice('/wh_'.length);
const bound = await t.c.webhooks.resolvePublic(secret);
const body = { prompt: 'hello there, a short prompt', asynchronous: true };

const round = (ms: number) => cpuRound(ms, IN_FLIGHT, () => t.c.webhooks.invoke({ form: 'public', secret, bound, query: {}, body: { ...body }, files: [] }));

await round(2000);
for (let i = 0; i < 3; i++) console.log(kind, await round(seconds * 1000));
await t.close();
