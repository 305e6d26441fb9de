/**
 * The peer of the synchronous-run comparison (bench/README.md, scenario `peers`): a Mastra server with one agent on
 * the same scripted OpenAI-compatible LLM the service uses, started the way Mastra's own server starts
 * (`createNodeServer` of @mastra/deployer), answering `POST /api/agents/bench/generate`.
 *
 * Mastra is installed by `npm run bench:peers` into the git-ignored bench/.peers/mastra (the last 0.x line, the one
 * that runs on Node 20; Mastra 1.x needs Node 22). Env: BENCH_LLM_URL (the scripted LLM), BENCH_PEER_PORT.
 * Prints `{"url"}` on stdout when it listens, like the other children.
 */
import { createRequire } from 'node:module';

const require = createRequire(new URL('../.peers/mastra/package.json', import.meta.url));
const load = (name) => import(require.resolve(name));
const { Mastra } = await load('@mastra/core/mastra');
const { Agent } = await load('@mastra/core/agent');
const { createOpenAI } = await load('@ai-sdk/openai');
const { createNodeServer } = await load('@mastra/deployer/server');

const openai = createOpenAI({ baseURL: process.env.BENCH_LLM_URL, apiKey: 'x' });
const agent = new Agent({ name: 'bench', instructions: 'You are a helpful agent.', model: openai.chat('gpt-4o-mini') });
const port = Number(process.env.BENCH_PEER_PORT ?? 4111);
const mastra = new Mastra({ agents: { bench: agent }, server: { port, host: '127.0.0.1' }, logger: false, telemetry: { enabled: false } });
await createNodeServer(mastra, { tools: {} });
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n');
