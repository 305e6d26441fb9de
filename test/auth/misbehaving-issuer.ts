/**
 * An OIDC issuer on 127.0.0.1 that misbehaves in scripted ways, one per path prefix:
 *
 *   /stall/...           accepts the request and never answers
 *   /slow/...            answers 200 and the start of a JSON document, then nothing
 *   /endless/...         answers 200 JSON and streams it until the client hangs up
 *   /big/...             answers a complete JSON document of 2 MiB (a jwks_uri and padding, or keys and padding)
 *   /good/...            a discovery document pointing at /good/jwks, and the key set `keys`
 *
 * Under /stall, /slow and /endless both the discovery document (`<prefix>/.well-known/openid-configuration`) and
 * the key set (`<prefix>/jwks`) misbehave; the 2 MiB discovery document of /big is valid and points at /good/jwks.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface MisbehavingIssuer {
  url: string;
  /** Requests received, by path. */
  requests: string[];
  close(): Promise<void>;
}

function streamForever(res: ServerResponse): void {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"keys":[');
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

export async function startMisbehavingIssuer(keys: { keys: unknown[] }): Promise<MisbehavingIssuer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let base = '';
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const [, mode, ...rest] = path.split('/');
    const discovery = rest.join('/') === '.well-known/openid-configuration';
    const json = (doc: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    if (mode === 'good') return discovery ? json({ issuer: `${base}/good`, jwks_uri: `${base}/good/jwks` }) : json(keys);
    if (mode === 'stall') return;
    if (mode === 'slow') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"');
      return;
    }
    if (mode === 'endless') return streamForever(res);
    if (mode === 'big') {
      const padding = 'x'.repeat(2 * 1024 * 1024);
      return json(discovery ? { jwks_uri: `${base}/good/jwks`, padding } : { ...keys, padding });
    }
    res.writeHead(404).end();
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
