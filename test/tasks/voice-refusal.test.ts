import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from './tasks-harness.js';

const MSG = "Value error, output_format 'voice' is not supported: this server has no speech synthesis (use 'text', 'markdown' or 'json'; voice_id is stored but unused)";

/** output_format `voice` (spec 2.2) is refused with the same 422 wherever a format is chosen; nothing is created. */
describe.each(TEST_DBS)('output_format voice is refused precisely (%s)', (kind) => {
  let t: TasksApp;
  beforeAll(async () => {
    t = await createTasksApp(kind);
  });
  afterAll(async () => t?.close());

  const only = (r: { statusCode: number; json(): any }) => {
    expect(r.statusCode).toBe(422);
    expect(r.json().detail).toHaveLength(1);
    return r.json().detail[0];
  };
  const taskCount = async () => (await t.req('GET', '/v1/tasks')).json().total as number;

  it('agent create and PATCH: loc body.output_format', async () => {
    expect(only(await t.req('POST', '/v1/agents', { name: `voice ${kind}`, output_format: 'voice', voice_id: 'alloy' }))).toEqual({ loc: ['body', 'output_format'], msg: MSG, type: 'value_error' });
    const agent = await t.createAgent({ voice_id: 'alloy' });
    expect(only(await t.req('PATCH', `/v1/agents/${agent}?deploy=true`, { output_format: 'voice' }))).toEqual({ loc: ['body', 'output_format'], msg: MSG, type: 'value_error' });
    expect((await t.req('GET', `/v1/agents/${agent}`)).json()).toMatchObject({ output_format: 'markdown', voice_id: 'alloy' });
  });

  it('invocations (/v1 invoke and xpander create-task): loc body.output_format, no task', async () => {
    const agent = await t.createAgent();
    const before = await taskCount();
    for (const url of [`/v1/agents/${agent}/invoke`, `/v1/agents/${agent}/invoke/async`, `/agent-execution/${agent}`]) {
      const issue = only(await t.req('POST', url, { input: { text: 'say it' }, output_format: 'voice' }));
      expect(issue, url).toMatchObject({ loc: ['body', 'output_format'], type: 'value_error' });
      expect(issue.msg, url).toContain("output_format 'voice' is not supported: this server has no speech synthesis");
    }
    expect(await taskCount()).toBe(before);
  });
});
