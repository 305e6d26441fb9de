import type { ReportRow } from './default-deployment.js';
import { freePort, interleaved, latency, memoryOf, spawnTracked, startService, type LoadResult } from './lib.js';
import { KEY, freshStore, setupAgent, type Store } from './service-setup.js';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * Scenario 7: synchronous agent runs against Mastra's generate endpoint, on the same instant scripted LLM, interleaved
 * in slices (lib.ts interleaved()). Agentry runs as `npm start` runs it (all roles in one process) and persists every
 * task, its run and its trace; the Mastra server (bench/peers/mastra-server.mjs) has no storage configured, which is
 * its default: it persists nothing. Skipped, with a line saying so, when `npm run bench:peers` has not been run.
 */
export async function peerComparison(o: {
  db: 'sqlite' | 'postgres';
  env: Record<string, string>;
  llmUrl: string;
  connections: number[];
  rounds: number;
  sliceSec: number;
  warmupSec: number;
  stores: Store[];
  row: (r: ReportRow) => void;
  extra: (line: string) => void;
}): Promise<void> {
  if (!existsSync(new URL('.peers/mastra/node_modules/@mastra/core', import.meta.url))) {
    o.extra('- peers: not measured (run `npm run bench:peers` first to install Mastra into bench/.peers)');
    return;
  }
  const store = await freshStore(o.db, o.env);
  o.stores.push(store);
  const svc = await startService(store.env);
  const mastra = await startMastra(o.llmUrl);
  try {
    const { id: agentId } = await setupAgent(svc, o.llmUrl);
    const ours = { url: `${svc.webhook}/?agent_id=${agentId}`, method: 'POST' as const, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi' }) };
    const theirs = { url: `${mastra.url}/api/agents/bench/generate`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) };
    if (o.warmupSec > 0) for (const call of [ours, theirs]) await latency({ ...call, durationSec: o.warmupSec });
    for (const connections of o.connections) {
      const [a, m] = (await interleaved([{ ...ours, connections }, { ...theirs, connections }], o.rounds, o.sliceSec)) as [LoadResult, LoadResult];
      o.row({ scenario: `7. sync agent run, ${connections} connections: Agentry (ceiling column: Mastra generate)`, db: o.db, result: a, ceiling: m, peakMb: memoryOf(svc.proc.pid!).peakMb });
      o.extra(`- ${o.db}: sync runs at ${connections} connections: Agentry ${a.rps.toFixed(0)}/s (p99 ${a.p99} ms), Mastra generate ${m.rps.toFixed(0)}/s (p99 ${m.p99} ms): **${(a.rps / Math.max(1, m.rps)).toFixed(2)}x**; Mastra peak RSS ${memoryOf(mastra.proc.pid!).peakMb.toFixed(0)} MB`);
    }
  } finally {
    mastra.proc.kill();
    await svc.stop();
  }
}

async function startMastra(llmUrl: string) {
  const port = await freePort();
  const proc = spawnTracked(process.execPath, [new URL('./peers/mastra-server.mjs', import.meta.url).pathname], { BENCH_LLM_URL: llmUrl, BENCH_PEER_PORT: String(port) });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', (line) => resolve(JSON.parse(line).url));
    proc.once('exit', (code) => reject(new Error(`the Mastra peer exited with ${code}`)));
  });
  return { proc, url };
}
