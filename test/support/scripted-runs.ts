import { expect } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';
import type { DbKind } from './harness.js';

/**
 * Runs of the real runtime against a scripted model with custom-function tools: the world the planning and chaining
 * suites share (test/runtime/deep-planning.test.ts, graph-chaining.test.ts). Each suite scripts the model per test
 * (`llm.reply`, reset by `resetScript`) and reads a run's trace.
 */
export type TraceEvent = { type: string; data: Record<string, any> };

export interface ScriptedRunWorld {
  t: TasksApp;
  llm: ScriptedLlmServer;
  /** Custom function ids by the names they were given. */
  fn: Record<string, string>;
}

/** A tasks app and a scripted OpenAI-compatible server, with one custom function per `functions` entry (name: source). */
export async function startScriptedRunWorld(kind: DbKind, functions: Record<string, string>): Promise<ScriptedRunWorld> {
  const [t, llm] = await Promise.all([createTasksApp(kind), startOpenAIServer()]);
  const fn: Record<string, string> = {};
  for (const [name, code] of Object.entries(functions)) {
    const r = await t.req('POST', '/v1/custom_functions', { name, code });
    expect(r.statusCode, r.body).toBe(201);
    fn[name] = r.json().id;
  }
  return { t, llm, fn };
}

/** Before each test: no recorded requests, no handler or queued replies. */
export function resetScript(llm: ScriptedLlmServer): void {
  llm.requests.length = 0;
  llm.handle(null);
}

/** A synchronous invocation (200) and its trace. */
export async function runTraced(t: TasksApp, agentId: string, text: string): Promise<{ task: Task; events: TraceEvent[] }> {
  const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text } });
  expect(r.statusCode, r.body).toBe(200);
  const task = r.json() as Task;
  const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TraceEvent[];
  return { task, events };
}

export const toolRequests = (events: TraceEvent[]) => events.filter((e) => e.type === 'tool_call_request').map((e) => e.data);
export const toolResults = (events: TraceEvent[]) => events.filter((e) => e.type === 'tool_call_result').map((e) => e.data);
