import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOKEN_LIFETIME_MS, OAuthTokenCache } from '../../src/connectors/invoke/oauth-token-cache.js';

/**
 * The client-credentials token cache against a real token endpoint on 127.0.0.1, on a clock the test moves: a token
 * is reused for what `expires_in` says, at most a day.
 */
describe('OAuth2 token cache', () => {
  let server: Server;
  let url = '';
  let issued = 0;
  let expiresIn: unknown = 3600;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume().on('end', () => {
        issued++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `tok-${issued}`, token_type: 'bearer', expires_in: expiresIn }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const creds = () => ({ token_url: url, client_id: 'c', client_secret: 's', scopes: [] });

  it('reuses a token for its stated lifetime, and a huge lifetime for a day at most', async () => {
    let now = 1_000_000;
    const cache = new OAuthTokenCache({ now: () => now });
    expiresIn = 3600;
    const first = await cache.token('conn-1', creds(), fetch);
    now += 3_000_000; // 50 min: still within the hour (renewed 30 s before it ends)
    expect(await cache.token('conn-1', creds(), fetch)).toBe(first);
    now += 3_600_000;
    expect(await cache.token('conn-1', creds(), fetch)).not.toBe(first);

    for (const huge of [1e308, 1e12, '99999999999999']) {
      expiresIn = huge;
      const before = issued;
      const token = await cache.token(`conn-${huge}`, creds(), fetch);
      now += MAX_TOKEN_LIFETIME_MS - 60_000;
      expect(await cache.token(`conn-${huge}`, creds(), fetch)).toBe(token);
      now += 60_000;
      expect(await cache.token(`conn-${huge}`, creds(), fetch), String(huge)).not.toBe(token);
      expect(issued - before).toBe(2);
    }
  });
});
