import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertAllowed, createEgressPolicy, createSafeFetch, EgressAllowList, EgressRefusedError, isNonPublicAddress } from '../../src/net/index.js';

/** The egress policy (CONTRACT section 10): address classes, the allow list, and the fetch that enforces them. */

describe('address classification', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fd12:3456::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:10.0.0.1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['2002:c0a8:0101::1', true],
    ['::ffff:8.8.8.8', false],
    ['2606:4700:4700::1111', false],
  ])('%s non-public: %s', (address, expected) => {
    expect(isNonPublicAddress(address)).toBe(expected);
  });

  it('matches allowed hosts, suffixes, addresses and CIDRs of both families', () => {
    const allow = new EgressAllowList(['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'internal.example', '*.corp.example']);
    expect(allow.allowsAddress('127.0.0.1')).toBe(true);
    expect(allow.allowsAddress('::ffff:127.0.0.1')).toBe(true);
    expect(allow.allowsAddress('127.0.0.2')).toBe(false);
    expect(allow.allowsAddress('10.200.0.1')).toBe(true);
    expect(allow.allowsAddress('fd00::5')).toBe(true);
    expect(allow.allowsAddress('fe80::1')).toBe(false);
    expect(allow.allowsHost('INTERNAL.example')).toBe(true);
    expect(allow.allowsHost('api.corp.example')).toBe(true);
    expect(allow.allowsHost('corp.example.evil')).toBe(false);
    expect(() => new EgressAllowList(['10.0.0.0/40'])).toThrow(/AGENTRY_EGRESS_ALLOW/);
  });
});

describe('safe fetch', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/redirect-private') {
        res.writeHead(302, { location: `http://127.0.0.3:${port}/ok` });
        return res.end();
      }
      if (req.url === '/redirect-same') {
        res.writeHead(307, { location: '/ok' });
        return res.end();
      }
      if (req.url === '/echo') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              method: req.method,
              type: req.headers['content-type'],
              length: req.headers['content-length'],
              chunked: req.headers['transfer-encoding'],
              custom: req.headers['x-custom'],
              body: Buffer.concat(chunks).toString(),
            }),
          );
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('refuses loopback, IPv4-mapped loopback, localhost and non-http schemes by default', async () => {
    const safe = createSafeFetch(createEgressPolicy([]));
    await expect(safe(`http://127.0.0.1:${port}/ok`)).rejects.toBeInstanceOf(EgressRefusedError);
    await expect(safe(`http://[::ffff:127.0.0.1]:${port}/ok`)).rejects.toThrow(/refused: ::ffff:7f00:1 is a private/);
    await expect(safe(`http://localhost:${port}/ok`)).rejects.toThrow(/refused/);
    await expect(safe('file:///etc/passwd')).rejects.toThrow(/only http and https/);
    await expect(assertAllowed(createEgressPolicy([]), `http://localhost:${port}/`)).rejects.toBeInstanceOf(EgressRefusedError);
  });

  it('reaches an allowed address, follows redirects within policy and checks every hop', async () => {
    const safe = createSafeFetch(createEgressPolicy(['127.0.0.1']));
    const ok = await safe(`http://127.0.0.1:${port}/ok`, { method: 'POST', body: 'x' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ method: 'POST', url: '/ok' });
    const same = await safe(`http://127.0.0.1:${port}/redirect-same`);
    expect(same.redirected).toBe(true);
    expect(await same.json()).toEqual({ method: 'GET', url: '/ok' });
    await expect(safe(`http://127.0.0.1:${port}/redirect-private`)).rejects.toThrow(/refused: 127.0.0.3/);
    const form = new FormData();
    form.append('field', 'value');
    const echoed = await (await safe(`http://127.0.0.1:${port}/echo`, { method: 'POST', body: form })).json();
    expect(echoed.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(echoed.body).toContain('name="field"');
    const manual = await safe(`http://127.0.0.1:${port}/redirect-private`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    await expect(assertAllowed(createEgressPolicy(['127.0.0.1']), `http://127.0.0.1:${port}/`)).resolves.toBeUndefined();
  });

  it('sends a URL-and-string-body call (the SDKs\' form, read without building a Request) exactly as the Request form', async () => {
    const safe = createSafeFetch(createEgressPolicy(['127.0.0.1']));
    const url = `http://127.0.0.1:${port}/echo`;
    const cases: RequestInit[] = [
      { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json', 'x-custom': 'v' } },
      { method: 'post', body: 'plain text', headers: [['x-custom', 'w']] },
      { method: 'PUT', body: '' },
      { method: 'POST' },
      { method: 'DELETE', headers: new Headers({ 'x-custom': 'h' }) },
    ];
    for (const init of cases) {
      const direct = await (await safe(url, init)).json();
      const viaUrl = await (await safe(new URL(url), init)).json();
      const viaRequest = await (await safe(new Request(url, init))).json();
      expect(direct).toEqual(viaRequest);
      expect(viaUrl).toEqual(viaRequest);
    }
    // What fetch itself would send: a string body without a type is text; no body is an empty one, not chunked.
    expect(await (await safe(url, { method: 'POST', body: 'x' })).json()).toMatchObject({ type: 'text/plain;charset=UTF-8', length: '1', body: 'x' });
    expect(await (await safe(url, { method: 'POST' })).json()).toMatchObject({ length: '0', body: '' });
    await expect(safe(url, { method: 'GET', body: 'x' })).rejects.toBeInstanceOf(TypeError);
  });

  it('allows a host by name', async () => {
    const safe = createSafeFetch(createEgressPolicy(['localhost']));
    const r = await safe(`http://localhost:${port}/ok`).catch((e: Error) => e);
    // localhost may resolve to ::1 first where nothing listens; what matters is that the policy let it through.
    expect(r instanceof EgressRefusedError).toBe(false);
  });
});
