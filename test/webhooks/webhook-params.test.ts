import { describe, expect, it } from 'vitest';
import { readPath } from '../../src/lib/dot-path.js';
import { parseWebhookParams } from '../../src/webhooks/webhook-params.js';

describe('dot paths', () => {
  const doc = { a: { b: [{ c: 1 }, { c: 'two' }] }, n: null };
  it('reads objects and indexes arrays with numeric segments or brackets', () => {
    expect(readPath(doc, 'a.b.1.c')).toBe('two');
    expect(readPath(doc, 'a.b[0].c')).toBe(1);
    expect(readPath(doc, 'n')).toBeNull();
  });
  it('answers undefined for anything missing, and never reads inherited properties', () => {
    expect(readPath(doc, 'a.x.y')).toBeUndefined();
    expect(readPath(doc, 'a.b.5')).toBeUndefined();
    expect(readPath(doc, 'a.b.c')).toBeUndefined();
    expect(readPath(doc, 'constructor')).toBeUndefined();
    expect(readPath(doc, 'a.__proto__')).toBeUndefined();
  });
});

describe('webhook parameters', () => {
  it('defaults: asynchronous on the public URL, synchronous with a key', () => {
    expect(parseWebhookParams('public', {}, { prompt: 'x' }).asynchronous).toBe(true);
    expect(parseWebhookParams('key', {}, { prompt: 'x' }).asynchronous).toBe(false);
  });

  it('takes user_tokens as an object in a JSON body or as JSON text', () => {
    expect(parseWebhookParams('public', {}, { user_tokens: { mcp1: 't' } }).userTokens).toEqual({ mcp1: 't' });
    expect(parseWebhookParams('public', { user_tokens: '{"mcp1":"q"}' }, { user_tokens: { mcp1: 't' } }).userTokens).toEqual({ mcp1: 'q' });
  });

  it('treats an empty value as not given, except for the prompt', () => {
    const p = parseWebhookParams('key', { asynchronous: '', task_id: '' }, { prompt: '' });
    expect(p).toMatchObject({ asynchronous: false, taskId: undefined, prompt: '' });
  });

  it('keeps parameters and credentials out of the context', () => {
    const p = parseWebhookParams('key', {}, { prompt: 'x', agent_id: 'a', 'x-api-key': 'k', api_key: 'k', user_id: 7, order: 1 });
    expect(p.context).toEqual({ order: 1 });
    expect(p.user).toEqual({ id: '7', email: null, first_name: null, last_name: null });
  });

  it('reports every bad value at once', () => {
    try {
      parseWebhookParams('public', { asynchronous: 'maybe' }, { json: 2, user_tokens: { a: 1 } });
      expect.unreachable();
    } catch (e) {
      expect((e as { issues: { loc: unknown[] }[] }).issues.map((i) => i.loc)).toEqual([
        ['query', 'asynchronous'],
        ['body', 'json'],
        ['body', 'user_tokens'],
      ]);
    }
  });
});
