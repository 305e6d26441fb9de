import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Container } from '../../src/container.js';
import { compactRow, expandRow, TaskInbox } from '../../src/tasks/task-inbox.js';
import { newTaskRow } from '../../src/tasks/task-rows.js';
import type { TaskSubmission } from '../../src/tasks/task.types.js';
import type { TaskInboxRepository } from '../../src/tasks/task-inbox.repository.js';
import type { TaskRow } from '../../src/tasks/tasks.repository.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { openaiAgentFields } from './tasks-harness.js';

/** Counts rows of a table straight from the database (what no API shows: where a task is kept). */
async function count(c: Container, table: 'task_inbox' | 'tasks' | 'task_runs' | 'task_events'): Promise<number> {
  const r = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(c.db.kysely);
  return Number(r.rows[0]!.n);
}

/**
 * The task inbox (src/tasks/task-inbox.ts): an asynchronous webhook call's task is committed to the inbox and
 * moved into `tasks` by the next reader, invisibly: every list shows it, exactly once, with its acceptance time.
 */
describe.each(TEST_DBS)('task inbox (%s)', (kind) => {
  let t: TestApp;
  let agentId: string;
  let hookPath: string;
  let agents = 0;

  beforeAll(async () => {
    // api and webhooks only: no worker moves or claims anything behind the test's back.
    t = await createTestApp(kind);
    const created = await t.req('POST', '/v1/agents', { name: `Inbox agent ${++agents}`, ...openaiAgentFields('http://127.0.0.1:9/v1') });
    agentId = created.json().id;
    hookPath = new URL((await t.req('POST', `/v1/agents/${agentId}/webhook`)).json().url).pathname;
  });
  afterAll(async () => t?.close());

  const accept = (prompt: string) =>
    t.webhooks.inject({ method: 'POST', url: hookPath, payload: JSON.stringify({ prompt }), headers: { 'content-type': 'application/json' } });

  it('keeps an accepted task in the inbox until a list reads it, then shows it once with its acceptance time and task_created event', async () => {
    const before = Date.now();
    const r = await accept('Summarise ticket 1');
    const after = Date.now();
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'Started' });
    expect(await count(t.c, 'task_inbox')).toBe(1);
    expect(await count(t.c, 'tasks')).toBe(0);

    const list = (await t.req('GET', `/v1/tasks?agent_id=${agentId}`)).json();
    expect(list.total).toBe(1);
    const task = list.items[0];
    expect(task).toMatchObject({ agent_id: agentId, status: 'pending', source: 'webhook', input: { text: 'Summarise ticket 1' } });
    const created = Date.parse(task.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1);
    expect(created).toBeLessThanOrEqual(after + 1);
    expect(await count(t.c, 'task_inbox')).toBe(0);
    expect(await count(t.c, 'task_runs')).toBe(1);

    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json();
    expect(events.map((e: { type: string }) => e.type)).toEqual(['task_created']);
    expect(Date.parse(events[0].time)).toBe(created);
    expect(events[0].data).toMatchObject({ id: task.id, status: 'pending' });

    // A second read moves nothing more.
    expect((await t.req('GET', `/v1/tasks?agent_id=${agentId}`)).json().total).toBe(1);
    expect(await count(t.c, 'tasks')).toBe(1);
  });

  it('counts tasks still in the inbox against a daily limit set after they were accepted', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: `Inbox agent ${++agents}`, ...openaiAgentFields('http://127.0.0.1:9/v1') })).json().id;
    const path = new URL((await t.req('POST', `/v1/agents/${agent}/webhook`)).json().url).pathname;
    for (const p of ['a', 'b']) {
      const r = await t.webhooks.inject({ method: 'POST', url: path, payload: JSON.stringify({ prompt: p }), headers: { 'content-type': 'application/json' } });
      expect(r.statusCode).toBe(200);
    }
    expect(await count(t.c, 'task_inbox')).toBe(2);
    const patched = await t.req('PATCH', `/v1/agents/${agent}`, { task_level_strategies: { max_runs_per_day: 2 } });
    expect(patched.statusCode).toBe(200);
    await t.req('POST', `/v1/agents/${agent}/deploy`);
    const over = await t.req('POST', `/v1/agents/${agent}/invoke/async`, { input: { text: 'c' } });
    expect(over.statusCode).toBe(429);
    expect(await count(t.c, 'task_inbox')).toBe(0);
  });

  it('moves the entries an earlier version left in the inbox (an upgrade) beside new ones', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: `Inbox agent ${++agents}`, ...openaiAgentFields('http://127.0.0.1:9/v1') })).json().id;
    const path = new URL((await t.req('POST', `/v1/agents/${agent}/webhook`)).json().url).pathname;
    // The entry as the previous version wrote it: an object of the columns that differ from a typical new task.
    const earlierId = '01a224d0-324f-776c-b9fc-5b52b69116ee';
    const earlier = { organization_id: t.orgA, id: earlierId, agent_id: agent, agent_version: '1', input_text: 'Left by the earlier version', title: 'Left by the earlier version', callback_url: null, max_attempts: 3, queued_at: 1795913953871, created_at: 1795913953871, updated_at: 1795913953871 };
    await t.c.db.kysely.insertInto('task_inbox').values({ row: JSON.stringify(earlier) }).execute();
    const r = await t.webhooks.inject({ method: 'POST', url: path, payload: JSON.stringify({ prompt: 'Accepted by this version' }), headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(200);
    const list = (await t.req('GET', `/v1/tasks?agent_id=${agent}`)).json();
    expect(list.items.map((i: { input: { text: string } }) => i.input.text).sort()).toEqual(['Accepted by this version', 'Left by the earlier version']);
    const moved = (await t.req('GET', `/v1/tasks/${earlierId}`)).json();
    expect(moved).toMatchObject({ id: earlierId, agent_id: agent, status: 'pending', title: 'Left by the earlier version' });
    expect(Date.parse(moved.created_at)).toBe(1795913953871);
    const fresh = (await t.req('GET', `/v1/tasks/${r.headers['x-task-id']}`)).json();
    expect(fresh).toMatchObject({ agent_id: agent, status: 'pending', title: 'Accepted by this version' });
    expect(Date.parse(fresh.created_at)).toBeGreaterThan(1795913953871);
  });

  it('numbers the entries of one append in the order given', async () => {
    const { TaskInboxRepository } = await import('../../src/tasks/task-inbox.repository.js');
    const repo = new TaskInboxRepository(t.c.db, undefined as never);
    const rows = ['{"n":"c"}', '{"n":"a"}', '{"n":"b"}'];
    await repo.append(rows);
    const stored = await t.c.db.kysely.selectFrom('task_inbox').select('row').orderBy('seq', 'desc').limit(3).execute();
    expect(stored.map((r) => r.row).reverse()).toEqual(rows);
    await t.c.db.kysely.deleteFrom('task_inbox').where('row', 'in', rows).execute();
  });

  it('moves every entry exactly once when two processes read at the same time', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: `Inbox agent ${++agents}`, ...openaiAgentFields('http://127.0.0.1:9/v1') })).json().id;
    const path = new URL((await t.req('POST', `/v1/agents/${agent}/webhook`)).json().url).pathname;
    const n = 1200;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        t.webhooks.inject({ method: 'POST', url: path, payload: JSON.stringify({ prompt: `p${i}` }), headers: { 'content-type': 'application/json' } }),
      ),
    );
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    const tasksBefore = await count(t.c, 'tasks');

    // Another process on the same database (two connections in one thread would wait on each other's lock).
    const other = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'support', 'list-tasks-process.ts'), t.orgA, agent], {
      env: { ...process.env, ...t.testEnv.env },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: other.stdout! })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('ready');
    // More than one move batch (500), from both processes at once.
    other.stdin!.write('go\n');
    const [mine, theirs] = await Promise.all([t.c.tasks.queries.list(t.orgA, { agentId: agent }, 1, 50), lines.next()]);
    expect(mine.total).toBe(n);
    expect(JSON.parse(theirs.value as string)).toEqual({ total: n });

    expect(await count(t.c, 'task_inbox')).toBe(0);
    expect((await count(t.c, 'tasks')) - tasksBefore).toBe(n);
    const texts = await sql<{ n: number }>`select count(distinct input_text) as n from tasks where agent_id = ${agent}`.execute(t.c.db.kysely);
    expect(Number(texts.rows[0]!.n)).toBe(n);
    const created = await sql<{ n: number }>`select count(*) as n from task_events e join tasks k on k.id = e.task_id where k.agent_id = ${agent} and e.type = 'task_created'`.execute(t.c.db.kysely);
    expect(Number(created.rows[0]!.n)).toBe(n);
  }, 60_000);
});

/** A repository whose moves wait until the test lets them finish, to order a settle against a running pass. */
function gatedRepository() {
  const entries: string[] = [];
  const gates: (() => void)[] = [];
  let moves = 0;
  const repo = {
    async append(rows: string[]) {
      entries.push(...rows);
    },
    async lastSeq() {
      return entries.length ? 1 : undefined;
    },
    async move(limit: number, _upTo: number, toRow: (entry: string) => TaskRow) {
      moves++;
      // What this pass sees is fixed when it starts, as a transaction's snapshot is.
      const taken = entries.splice(0, limit);
      await new Promise<void>((resolve) => gates.push(resolve));
      return { rows: taken.map(toRow), more: false };
    },
  };
  return { repo: repo as unknown as TaskInboxRepository, entries, gates, moves: () => moves };
}

describe('task inbox settling', () => {
  it('makes a reader that arrives during a pass wait for a later pass, which moves what was committed meanwhile', async () => {
    const g = gatedRepository();
    const inbox = new TaskInbox(g.repo, () => {});
    await inbox.append({ id: 'first' } as TaskRow);
    const first = inbox.settle();
    await new Promise((r) => setTimeout(r, 5));
    expect(g.moves()).toBe(1);
    // Committed after the running pass looked: that pass cannot have it.
    await inbox.append({ id: 'second' } as TaskRow);
    const late1 = inbox.settle();
    const late2 = inbox.settle();
    g.gates.shift()!();
    expect(await first).toBe(1);
    await new Promise((r) => setTimeout(r, 5));
    // One follow-up pass for both late readers.
    expect(g.moves()).toBe(2);
    g.gates.shift()!();
    expect(await late1).toBe(1);
    expect(await late2).toBe(1);
    expect(g.entries).toEqual([]);
    expect(g.moves()).toBe(2);
  });

  it('stores a row as the columns that differ from a typical new task, and restores every column', () => {
    const row = {
      organization_id: 'o',
      id: 't',
      agent_id: 'a',
      agent_version: '3',
      status: 'pending',
      source: 'api',
      input_text: 'hello',
      input_files: '[{"id":"f"}]',
      input_user: '{"id":"u"}',
      user_id: 'u',
      title: 'hello',
      result: null,
      additional_context: '{"k":1}',
      expected_output: null,
      instructions_override: 'be brief',
      output_format: 'json',
      output_schema: '{"type":"object"}',
      disable_attachment_injection: 1,
      sealed_user_tokens: 'sealed',
      parent_execution: 'p',
      call_depth: 2,
      callback_url: null,
      is_manually_stopped: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      llm_model_provider: null,
      llm_model_name: null,
      run: 1,
      execution_attempts: 0,
      max_attempts: 3,
      fence: 0,
      lease_owner: null,
      lease_expires_at: null,
      heartbeat_at: null,
      queued_at: 5,
      hitl_request: null,
      hitl_decision: null,
      created_at: 5,
      updated_at: 5,
      started_at: null,
      finished_at: null,
      schedule_id: 's',
      fair_rank: 7,
      payload_stored: 0,
    } as TaskRow;
    expect(expandRow(compactRow(row))).toEqual(row);
    const typical = { ...row, source: 'webhook', schedule_id: null, fair_rank: null, input_files: '[]', input_user: null, user_id: null, title: null, additional_context: null, instructions_override: null, output_format: null, output_schema: null, disable_attachment_injection: 0, sealed_user_tokens: null, parent_execution: null, call_depth: 0 } as TaskRow;
    expect(expandRow(compactRow(typical))).toEqual(typical);
    // The ten columns every new task sets, by position, and nothing else.
    expect(JSON.parse(compactRow(typical))).toEqual(['o', 't', 'a', '3', 'hello', null, null, null, 3, 5]);
    // A title that is the input text is not stored twice; one that is not is.
    expect(JSON.parse(compactRow({ ...typical, title: 'hello' }))[5]).toBe(0);
    expect(expandRow(compactRow({ ...typical, title: 'hello' })).title).toBe('hello');
    expect(expandRow(compactRow({ ...typical, title: 'hell…' })).title).toBe('hell…');
    // Only the untypical columns follow, queued_at and updated_at when they are not created_at.
    expect(JSON.parse(compactRow({ ...typical, source: 'api', queued_at: 9, updated_at: 8 }))[10]).toEqual({ source: 'api', queued_at: 9, updated_at: 8 });
    expect(expandRow(compactRow({ ...typical, queued_at: 9, updated_at: 8 }))).toEqual({ ...typical, queued_at: 9, updated_at: 8 });
  });

  it('reads the entries an earlier version wrote (an object of the untypical columns), as a restart after an upgrade finds them', () => {
    const earlier = '{"organization_id":"o","id":"t","agent_id":"a","agent_version":"2","source":"api","input_text":"Summarise the ticket","title":"Summarise the ticket","output_format":"markdown","callback_url":null,"max_attempts":3,"queued_at":1795913953871,"created_at":1795913953871,"updated_at":1795913953872}';
    const row = expandRow(earlier);
    expect(row).toMatchObject({ organization_id: 'o', id: 't', agent_id: 'a', agent_version: '2', status: 'pending', source: 'api', input_text: 'Summarise the ticket', title: 'Summarise the ticket', output_format: 'markdown', callback_url: null, max_attempts: 3, run: 1, input_files: '[]', queued_at: 1795913953871, created_at: 1795913953871, updated_at: 1795913953872 });
    // The same row written today reads back the same.
    expect(expandRow(compactRow(row))).toEqual(row);
  });

  it('keeps every column of a task row through its inbox entry, typical or not', () => {
    // Built from newTaskRow's own keys, so a column added to the row and forgotten by compactRow fails here.
    const fields = { agent_version: '1', source: 'webhook', input_text: 'hi', input_files: '[]', input_user: null, user_id: null, additional_context: null, expected_output: null, instructions_override: null, output_format: null, output_schema: null, disable_attachment_injection: 0, sealed_user_tokens: null, max_attempts: 3, parent_execution: null, call_depth: 0, callback_url: null };
    const base = newTaskRow({ organizationId: 'o', agentId: 'a', text: 'hi', source: 'webhook' } as TaskSubmission, 't', fields, 5);
    const untypical = Object.fromEntries(Object.entries(base).map(([k, v]) => [k, typeof v === 'number' ? v + 7 : `${k}-value`])) as unknown as TaskRow;
    expect(Object.keys(untypical)).toHaveLength(Object.keys(base).length);
    expect(expandRow(compactRow(untypical))).toEqual(untypical);
    // Every column is in the entry: ten by position, every other one after them (queued_at and updated_at equal
    // created_at here, so they are not repeated).
    const other = (JSON.parse(compactRow(untypical)) as unknown[])[10] as Record<string, unknown>;
    expect(Object.keys(other)).toHaveLength(Object.keys(base).length - 12);
    expect(expandRow(compactRow(base))).toEqual(base);
  });

  it('writes an entry that is the JSON of its columns, whatever their text or numbers hold', () => {
    const fields = { agent_version: 2, source: 'webhook', input_text: 'say "hi"\\ \n\u2028 émoji 🎉 \u0000 \ud800', input_files: '[]', input_user: null, user_id: null, additional_context: '{"a":[1,2]}', expected_output: null, instructions_override: null, output_format: null, output_schema: null, disable_attachment_injection: 0, sealed_user_tokens: null, max_attempts: 3, parent_execution: null, call_depth: 0, callback_url: null };
    const row = { ...newTaskRow({ organizationId: 'o', agentId: 'a', text: 'x', source: 'webhook' } as TaskSubmission, 't', fields as never, 1_795_865_997_823), prompt_tokens: 2 ** 53, total_tokens: 1.5, run: -0 } as TaskRow;
    const entry = compactRow(row);
    // Well-formed JSON (a lone surrogate escaped), and every column read back as JSON carries it (-0 becomes 0).
    expect(entry).toContain('\\ud800');
    expect(expandRow(entry)).toEqual(JSON.parse(JSON.stringify({ ...row, run: 0 })));
    expect(expandRow(entry).input_text).toBe(fields.input_text);
  });

  it('settles an empty inbox without moving anything', async () => {
    const g = gatedRepository();
    const inbox = new TaskInbox(g.repo, () => {});
    expect(await inbox.settle()).toBe(0);
    expect(g.moves()).toBe(0);
  });
});
