import { describe, expect, it } from 'vitest';
import { buildRequest } from '../../src/connectors/invoke/request-builder.js';
import type { RequestPlan } from '../../src/connectors/openapi/operation-schema.js';

/** Parameter serialisation per OpenAPI style/explode, and body encodings. */

const plan = (parameters: RequestPlan['parameters'], bodyMediaType: string | null = null): RequestPlan => ({ parameters, bodyMediaType });

describe('request builder', () => {
  it('fills path templates per style, encoding values', () => {
    const p = plan([
      { name: 'id', in: 'path' },
      { name: 'label', in: 'path', style: 'label' },
      { name: 'm', in: 'path', style: 'matrix', explode: true },
    ]);
    const r = buildRequest('https://api.example.com/v1/', '/a/{id}/{label}/{m}', 'get', p, { path_params: { id: 'x/y z', label: ['a', 'b'], m: ['1', '2'] } }, {});
    expect(r.url.href).toBe('https://api.example.com/v1/a/x%2Fy%20z/.a,b/;m=1;m=2');
  });

  it('serialises query arrays and objects per style', () => {
    const p = plan([
      { name: 'f', in: 'query' },
      { name: 'c', in: 'query', explode: false },
      { name: 's', in: 'query', style: 'spaceDelimited', explode: false },
      { name: 'p', in: 'query', style: 'pipeDelimited', explode: false },
      { name: 'd', in: 'query', style: 'deepObject', explode: true },
    ]);
    const r = buildRequest('https://h', '/q', 'get', p, { query_params: { f: [1, 2], c: ['x', 'y'], s: ['a', 'b'], p: ['a', 'b'], d: { k: 'v' }, extra: true } }, { query: { key: 'g' } });
    const q = r.url.searchParams;
    expect(q.getAll('f')).toEqual(['1', '2']);
    expect(q.get('c')).toBe('x,y');
    expect(q.get('s')).toBe('a b');
    expect(q.get('p')).toBe('a|b');
    expect(q.get('d[k]')).toBe('v');
    expect(q.get('extra')).toBe('true');
    expect(q.get('key')).toBe('g');
  });

  it('encodes bodies in the operation media type; connection headers yield to the payload', () => {
    const json = buildRequest('https://h', '/b', 'post', plan([], 'application/vnd.api+json'), { body_params: [1, 2], headers: { 'X-A': 'payload' } }, { headers: { 'X-A': 'conn', 'X-B': 'conn' } });
    expect(json.body).toBe('[1,2]');
    expect(json.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(json.headers.get('x-a')).toBe('payload');
    expect(json.headers.get('x-b')).toBe('conn');
    const form = buildRequest('https://h', '/b', 'post', plan([], 'multipart/form-data'), { body_params: { a: 'x', o: { k: 1 } } }, {});
    expect(form.body).toBeInstanceOf(FormData);
    expect((form.body as FormData).get('o')).toBe('{"k":1}');
    const text = buildRequest('https://h', '/b', 'put', plan([], 'text/plain'), { body_params: 'hello', cookies: { session: 'a b' } }, {});
    expect(text.body).toBe('hello');
    expect(text.headers.get('cookie')).toBe('session=a%20b');
    const none = buildRequest('https://h', '/b', 'get', plan([]), {}, {});
    expect(none.body).toBeUndefined();
  });
});
