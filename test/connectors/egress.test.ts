import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertAllowed, createEgressPolicy, createSafeFetch, EgressAllowList, EgressRefusedError, isNonPublicAddress } from '../../src/net/index.js';

/** The egress policy (docs/contract.md#egress): address classes, the allow list, and the fetch that enforces them. */

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

  // Issue 20: every range of the IANA special-purpose registries (first and last address where it matters), the
  // IPv6 forms that embed an IPv4 address, and odd spellings of the same addresses.
  it.each([
    // IPv4 special-purpose registry
    ['0.0.0.0', '0.255.255.255'],
    ['10.0.0.0', '10.255.255.255'],
    ['100.64.0.0', '100.127.255.255'],
    ['127.0.0.1', '127.255.255.254'],
    ['169.254.0.1', '169.254.255.254'],
    ['172.16.0.0', '172.31.255.255'],
    ['192.0.0.0', '192.0.0.255'],
    ['192.0.2.0', '192.0.2.255'],
    ['192.88.99.0', '192.88.99.255'],
    ['192.168.0.0', '192.168.255.255'],
    ['198.18.0.0', '198.19.255.255'],
    ['198.51.100.0', '198.51.100.255'],
    ['203.0.113.0', '203.0.113.255'],
    ['224.0.0.0', '239.255.255.255'],
    ['240.0.0.0', '255.255.255.254'],
    ['255.255.255.255', '255.255.255.255'],
    // IPv6 special-purpose registry
    ['::', '0:0:0:0:0:0:0:0'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'], // IPv4-mapped, dotted and hex
    ['::ffff:10.0.0.1', '0:0:0:0:0:ffff:a00:1'],
    ['::ffff:169.254.169.254', '::FFFF:A9FE:A9FE'],
    ['::ffff:0:127.0.0.1', '::ffff:0:808:808'], // IPv4-translated: refused whatever it embeds
    ['::127.0.0.1', '::8.8.8.8'], // IPv4-compatible (deprecated)
    ['64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe'], // NAT64 with a non-public IPv4 inside
    ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'], // local-use NAT64, whatever it embeds
    ['64:ff9b:1::808:808', '64:FF9B:1::8.8.8.8'],
    ['100::', '100::ffff:ffff:ffff:ffff'], // discard-only
    ['100:0:0:1::', '100:0:0:1:ffff:ffff:ffff:ffff'], // dummy prefix
    ['2001::', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff'], // Teredo
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0000:4136:E378:8000:63BF:3FFF:FDD2'],
    ['2001:1::1', '2001:1::3'], // PCP, TURN, DNS-SD anycast
    ['2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff'], // benchmarking
    ['2001:3::1', '2001:4:112::1'], // AMT, AS112-v6
    ['2001:10::1', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff'], // ORCHID (deprecated)
    ['2001:20::', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff'], // ORCHIDv2
    ['2001:30::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'], // DRIP and the rest of 2001::/23
    ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'], // documentation
    ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'], // documentation
    ['2002:7f00:1::', '2002:c0a8:101::1'], // 6to4 with a non-public IPv4 inside
    ['2002:a9fe:a9fe::1', '2002:0a00:0001:0000:0000:0000:0000:0001'],
    ['5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], // SRv6 SIDs
    ['fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], // unique-local
    ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], // link-local
    ['fe80::1%eth0', 'FE80::1%25eth0'],
    ['fec0::1', 'feff::1'], // site-local (deprecated)
    ['ff00::', 'ff02::1'], // multicast
    ['4000::1', 'e000::1'], // outside 2000::/3: unassigned
    ['8000::', 'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    // not addresses (octal, hexadecimal and integer IPv4 text never reach this check from a URL or DNS)
    ['0177.0.0.1', '0x7f.0.0.1'],
    ['2130706433', 'not-an-address'],
  ])('refuses %s and %s', (a, b) => {
    expect(isNonPublicAddress(a), a).toBe(true);
    expect(isNonPublicAddress(b), b).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '192.31.196.1', // AS112-v4, globally reachable
    '192.52.193.1', // AMT, globally reachable
    '192.175.48.1', // AS112 direct delegation
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '::ffff:8.8.8.8',
    '::FFFF:808:808',
    '64:ff9b::8.8.8.8', // NAT64 of a public address
    '64:ff9b::808:808',
    '2002:808:808::1', // 6to4 of a public address
    '2001:200::1', // just past 2001::/23
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '2620:4f:8000::1', // AS112 direct delegation, globally reachable
    '3ffe:ffff::1', // below 3fff::/20
    '2A00:1450:4001:82B::200E',
  ])('treats %s as public', (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });

  it('refuses every odd spelling of loopback and metadata addresses in URLs, and lets the allow list reach 127.0.0.1', async () => {
    const policy = createEgressPolicy([]);
    for (const url of [
      'http://0x7f.0.0.1/',
      'http://0177.0.0.1/',
      'http://2130706433/',
      'http://127.1/',
      'http://[::FFFF:127.0.0.1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[64:ff9b::169.254.169.254]/',
      'http://[64:ff9b:1::1]/',
      'http://[2002:7f00:1::1]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
      'http://[100::1]/',
      'http://[::]/',
      'http://[fe80::1]/',
    ]) {
      await expect(assertAllowed(policy, url), url).rejects.toBeInstanceOf(EgressRefusedError);
    }
    const allowLoopback = createEgressPolicy(['127.0.0.1']);
    await expect(assertAllowed(allowLoopback, 'http://127.0.0.1/')).resolves.toBeUndefined();
    await expect(assertAllowed(allowLoopback, 'http://[::ffff:127.0.0.1]/')).resolves.toBeUndefined();
    await expect(assertAllowed(allowLoopback, 'http://127.0.0.2/')).rejects.toBeInstanceOf(EgressRefusedError);
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
