import { describe, expect, it } from 'vitest';
import { collectRefs, resolveTemplate } from '../../src/workflows/workflow-mapping.js';

describe('workflow input mapping', () => {
  const scope = {
    input: { text: '{"order":"42","items":[{"sku":"a"}]}', user: { id: 'u1' } },
    outputs: new Map<string, unknown>([
      ['lookup', { status_code: 200, result: { total: 30, tags: ['x', 'y'] } }],
      ['ask', 'plain text'],
    ]),
  };

  it('keeps the type of a whole-string reference and writes embedded ones as text', () => {
    expect(resolveTemplate('{{steps.lookup.output.result.total}}', scope)).toBe(30);
    expect(resolveTemplate(' {{ steps.lookup.output.result }} ', scope)).toEqual({ total: 30, tags: ['x', 'y'] });
    expect(resolveTemplate('total {{steps.lookup.output.result.total}} of {{input.user.id}}', scope)).toBe('total 30 of u1');
    expect(resolveTemplate('tags {{steps.lookup.output.result.tags}}', scope)).toBe('tags ["x","y"]');
    expect(resolveTemplate({ a: ['{{steps.lookup.output.result.tags[1]}}', 3], b: true }, scope)).toEqual({ a: ['y', 3], b: true });
  });

  it('descends into strings holding JSON, and reads missing values as null or nothing', () => {
    expect(resolveTemplate('{{input.text.order}}', scope)).toBe('42');
    expect(resolveTemplate('{{input.text.items.0.sku}}', scope)).toBe('a');
    expect(resolveTemplate('{{steps.ask.output.field}}', scope)).toBeNull();
    expect(resolveTemplate('{{steps.skipped.output}}', scope)).toBeNull();
    expect(resolveTemplate('[{{steps.skipped.output}}]', scope)).toBe('[]');
    expect(resolveTemplate('{{steps.ask.output}}', scope)).toBe('plain text');
  });

  it('finds references with their place, and flags malformed ones', () => {
    const refs = collectRefs({ path_params: { id: '{{input.text.order}}' }, note: ['x {{steps.ask.output}}', '{{ env.HOME }}', '{{steps.ask}}'] }, ['input']);
    expect(refs).toEqual([
      { raw: 'input.text.order', at: ['input', 'path_params', 'id'], step: undefined },
      { raw: 'steps.ask.output', at: ['input', 'note', 0], step: 'ask' },
      expect.objectContaining({ at: ['input', 'note', 1], problem: expect.stringContaining('not a reference') }),
      expect.objectContaining({ at: ['input', 'note', 2], problem: expect.stringContaining('not a reference') }),
    ]);
  });
});
