/**
 * The cost of `q` on the task lists (src/tasks/task-text-search.ts), measured rather than guessed:
 *
 *   npx tsx bench/task-search.ts [sqlite|postgres] [tasks]
 *
 * Fills one organization with `tasks` tasks (default 50,000) whose inputs and results are ~300 characters, then
 * times GET /v1/tasks?q=... (in process, Fastify inject) for a word no task contains (the whole window is read: the
 * worst case), a word every task contains (the first page fills at once), and the same list without q.
 */
import { createTestApp } from '../test/support/harness.js';

const kind = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const total = Number(process.argv[3] ?? 50_000);
const t = await createTestApp(kind);
try {
  const agent = (await t.req('POST', '/v1/agents', { name: 'bench' })).json().id as string;
  const now = Date.now();
  const filler = 'The customer writes about an order that arrived late and asks what the options are for a refund. ';
  for (let i = 0; i < total; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, total - i) }, (_, k) => {
      const n = i + k;
      return {
        organization_id: t.orgA, id: `b-${n}`, agent_id: agent, agent_version: 'draft', status: 'completed', source: 'api',
        input_text: `${filler}${filler}ticket ${n}`, input_files: '[]', result: `${filler}${filler}${filler}answer ${n}`,
        disable_attachment_injection: 0, call_depth: 0, is_manually_stopped: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0,
        run: 1, execution_attempts: 1, max_attempts: 1, fence: 1, queued_at: now - total + n, created_at: now - total + n, updated_at: now,
      };
    });
    await t.c.db.kysely.insertInto('tasks').values(rows).execute();
  }
  const time = async (label: string, url: string) => {
    await t.req('GET', url);
    const runs: number[] = [];
    for (let r = 0; r < 7; r++) {
      const start = performance.now();
      const res = await t.req('GET', url);
      runs.push(performance.now() - start);
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    runs.sort((a, b) => a - b);
    console.log(`${kind} ${total} tasks  ${label.padEnd(28)} median ${runs[3]!.toFixed(1)} ms  (min ${runs[0]!.toFixed(1)}, max ${runs[6]!.toFixed(1)})`);
  };
  await time('list, no q', '/v1/tasks');
  await time('q matches nothing', '/v1/tasks?q=zebra');
  await time('q matches every task', '/v1/tasks?q=refund');
  await time('q + agent filter, nothing', `/v1/tasks?q=zebra&agent_id=${agent}`);
} finally {
  await t.close();
}
