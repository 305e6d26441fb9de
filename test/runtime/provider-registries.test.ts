import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/lib/logger.js';
import { allOf, settled } from '../../src/lib/awaitable.js';
import { RuntimeToolRegistry, ToolBuildError } from '../../src/runtime/tools/index.js';
import { ContextContributorRegistry } from '../../src/runtime/context-contributors.js';
import type { RunContextAgent, RuntimeTool, ToolCallContext } from '../../src/tools/tool-kinds.js';
import type { Task } from '../../src/tasks/task.types.js';

// The registries ask every provider on every run; most answer at once. These pin what a caller relies on whichever
// way a provider answers: names made unique, a failing provider reported (tools) or left out (context), and every
// provider asked even when one fails early.

const agent = {} as RunContextAgent;
const ctx = (signal = new AbortController().signal) => ({ signal }) as ToolCallContext;
const tool = (name: string): RuntimeTool => ({ name, description: name, inputSchema: { type: 'object' }, mutating: false, execute: async () => name });
const later = <T>(v: T, ms = 5) => new Promise<T>((r) => setTimeout(() => r(v), ms));

describe('RuntimeToolRegistry', () => {
  it('answers at once when every provider does, with clashing names made unique', () => {
    const reg = new RuntimeToolRegistry();
    reg.register('action', { buildTools: () => [tool('search'), tool('Send email!')] });
    reg.register('mcp', { buildTools: () => [tool('search')] });
    reg.register('skill', { buildTools: () => [] });
    const built = reg.buildTools(agent, ctx());
    expect(built).toBeInstanceOf(Array);
    expect((built as RuntimeTool[]).map((t) => t.name)).toEqual(['search', 'Send_email', 'search_2']);
  });

  it('waits for providers that look things up, keeping the registration order', async () => {
    const reg = new RuntimeToolRegistry();
    reg.register('action', { buildTools: () => later([tool('a')]) });
    reg.register('mcp', { buildTools: () => [tool('b')] });
    const built = reg.buildTools(agent, ctx());
    expect(built).toBeInstanceOf(Promise);
    expect((await built).map((t) => t.name)).toEqual(['a', 'b']);
  });

  it('reports a provider that throws at once as a ToolBuildError, after asking the others', async () => {
    const asked: string[] = [];
    const reg = new RuntimeToolRegistry();
    reg.register('action', {
      buildTools: () => {
        asked.push('action');
        throw new Error('connection store down');
      },
    });
    reg.register('mcp', {
      buildTools: () => {
        asked.push('mcp');
        return later([], 5).then(() => Promise.reject(new Error('also down')));
      },
    });
    const err = await Promise.resolve(reg.buildTools(agent, ctx())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolBuildError);
    expect((err as Error).message).toBe("Could not prepare the agent's action tools: connection store down");
    expect(asked).toEqual(['action', 'mcp']);
    // The second failure is handled (an unhandled rejection would fail the test run).
    await later(undefined, 20);
  });

  it('passes an abort on as it is', async () => {
    const ac = new AbortController();
    const reason = new Error('run cancelled');
    ac.abort(reason);
    const reg = new RuntimeToolRegistry();
    reg.register('mcp', { buildTools: () => Promise.reject(reason) });
    await expect(Promise.resolve(reg.buildTools(agent, ctx(ac.signal)))).rejects.toBe(reason);
  });
});

describe('ContextContributorRegistry', () => {
  const input = { agent, task: { id: 't1' } as Task, signal: new AbortController().signal };
  const logged = () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (c, _e, done) => (lines.push(String(c)), done()) });
    return { lines, log: createLogger('warn', 'json', sink) };
  };

  it('answers at once when every contributor does, leaving out empty sections', () => {
    const { log } = logged();
    const reg = new ContextContributorRegistry(log);
    reg.register('a', { contribute: () => ({ title: 'A', text: 'alpha' }) });
    reg.register('b', { contribute: () => null });
    reg.register('c', { contribute: () => [{ title: 'C', text: '  ' }, { title: 'D', text: 'delta' }] });
    expect(reg.collect(input)).toEqual([
      { title: 'A', text: 'alpha' },
      { title: 'D', text: 'delta' },
    ]);
  });

  it('leaves out and logs a contributor that fails, synchronously or not, and keeps the others', async () => {
    const { log, lines } = logged();
    const reg = new ContextContributorRegistry(log);
    reg.register('sync', {
      contribute: () => {
        throw new Error('boom');
      },
    });
    reg.register('async', { contribute: () => Promise.reject(new Error('bang')) });
    reg.register('ok', { contribute: () => later({ title: 'K', text: 'kept' }) });
    expect(await reg.collect(input)).toEqual([{ title: 'K', text: 'kept' }]);
    await later(undefined, 5);
    const warned = lines.map((l) => JSON.parse(l) as { contributor: string; msg: string });
    expect(warned.map((w) => w.contributor).sort()).toEqual(['async', 'sync']);
    expect(warned.every((w) => w.msg === 'context contributor failed; run continues without it')).toBe(true);
  });
});

describe('awaitable helpers', () => {
  it('allOf keeps values that are ready and waits only when one is not', async () => {
    const ready = [1, 2];
    expect(allOf(ready)).toBe(ready);
    expect(await allOf([1, later(2)])).toEqual([1, 2]);
  });

  it('settled maps a synchronous throw and a rejection alike', async () => {
    expect(settled(() => { throw new Error('x'); }, () => 'mapped')).toBe('mapped');
    expect(await settled(() => Promise.reject(new Error('x')), () => 'mapped')).toBe('mapped');
    await expect(Promise.resolve(settled(() => { throw new Error('x'); }, (e) => { throw new Error(`wrapped ${(e as Error).message}`); }))).rejects.toThrow('wrapped x');
  });
});
