/**
 * A real OIDC issuer's key endpoint on 127.0.0.1 for tests: jose generates the signing key, a node:http server serves
 * its public half as a JWKS, and `sign` issues tokens the way an identity provider would.
 *
 *   const idp = await startJwksServer();           // idp.jwksUrl, idp.issuer
 *   const token = await idp.sign({ sub: 'u1', aud: 'app', email: 'a@b.c' });
 *   const forged = await idp.signWithOtherKey({ sub: 'u1', aud: 'app' });
 *   idp.requests                                   // JWKS fetches served
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose';

export interface JwksServer {
  issuer: string;
  jwksUrl: string;
  requests: number;
  sign(claims: JWTPayload, opts?: { expiresIn?: string | number; issuer?: string }): Promise<string>;
  signWithOtherKey(claims: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export async function startJwksServer(issuer = 'https://idp.example.test'): Promise<JwksServer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    state.requests++;
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const sign = (key: CryptoKey, claims: JWTPayload, opts: { expiresIn?: string | number; issuer?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .setIssuer(opts.issuer ?? issuer)
      .setIssuedAt()
      .setExpirationTime(opts.expiresIn ?? '10m')
      .sign(key);
  return {
    issuer,
    jwksUrl: `http://127.0.0.1:${port}/jwks`,
    get requests() {
      return state.requests;
    },
    sign: (claims, opts) => sign(privateKey, claims, opts),
    signWithOtherKey: (claims) => sign(other.privateKey, claims),
    close: () => new Promise((r) => server.close(() => r())),
  };
}
