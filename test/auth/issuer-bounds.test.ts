import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/auth.service.js';
import { ISSUER_READ_TIMEOUT_MS } from '../../src/auth/issuer-keys.js';
import { PreAuthService } from '../../src/auth/pre-auth.service.js';
import { AppError } from '../../src/errors.js';
import { systemClock } from '../../src/lib/clock.js';
import { createEgressPolicy, createSafeFetch } from '../../src/net/index.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { startMisbehavingIssuer, type MisbehavingIssuer } from './misbehaving-issuer.js';

/**
 * The issuers' documents the operator configured (OIDC discovery, the JWKS of pre-auth and of JWT authentication)
 * are read within a deadline (5 s, the answer's body included) and a size bound (1 MiB): an issuer that stalls or
 * answers without end fails the verification with a 503 that names the URL, instead of holding it or the memory.
 */

const agent = { use_oidc_pre_auth: true, pre_auth_audiences: ['app'], use_oidc_pre_auth_token_for_llm: false, oidc_pre_auth_token_llm_audience: null, oidc_pre_auth_token_mcp_audience: null };

let issuer: MisbehavingIssuer;
let privateKey: CryptoKey;
beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  issuer = await startMisbehavingIssuer({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
});
afterAll(async () => {
  await issuer?.close();
});

const sign = (iss: string, claims: Record<string, unknown> = {}) =>
  new SignJWT({ sub: 'u1', aud: 'app', ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setIssuedAt().setExpirationTime('10m').sign(privateKey);

/** The error a call failed with, and how long it took. */
async function outcome(p: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

function expectUnavailable(o: { error: unknown; ms: number }, detail: string, withinMs: number): void {
  expect(o.error).toBeInstanceOf(AppError);
  const e = o.error as AppError;
  expect([e.code, e.message]).toEqual(['unavailable', detail]);
  expect(o.ms).toBeLessThan(withinMs);
}

describe('issuer documents are read within a deadline and a size bound', () => {
  const safeFetch = createSafeFetch(createEgressPolicy(['127.0.0.1']));
  const preAuth = (mode: string, jwksUrl?: string) => new PreAuthService({ issuer: `${issuer.url}/${mode}`, jwksUrl }, safeFetch, systemClock);
  const within = ISSUER_READ_TIMEOUT_MS + 1500;

  it('OIDC pre-auth: a discovery or a JWKS that stalls, before or after its headers, fails in about 5 s naming the URL', async () => {
    const [discoveryStalls, discoverySlow, jwksStalls, jwksSlow] = await Promise.all([
      outcome(preAuth('stall').verifyToken(agent, await sign(`${issuer.url}/stall`))),
      outcome(preAuth('slow').verifyToken(agent, await sign(`${issuer.url}/slow`))),
      outcome(preAuth('good', `${issuer.url}/stall/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))),
      outcome(preAuth('good', `${issuer.url}/slow/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))),
    ]);
    const late = (what: string) => `The OIDC issuer's keys could not be fetched (${what} did not answer within 5 s); retry later`;
    expectUnavailable(discoveryStalls, late(`OIDC discovery at ${issuer.url}/stall/.well-known/openid-configuration`), within);
    expectUnavailable(discoverySlow, late(`OIDC discovery at ${issuer.url}/slow/.well-known/openid-configuration`), within);
    expectUnavailable(jwksStalls, late(`the JWKS at ${issuer.url}/stall/jwks`), within);
    expectUnavailable(jwksSlow, late(`the JWKS at ${issuer.url}/slow/jwks`), within);
    // Not before its deadline either.
    expect(discoveryStalls.ms).toBeGreaterThan(ISSUER_READ_TIMEOUT_MS - 100);
  }, 20_000);

  it('OIDC pre-auth: a discovery document or a JWKS past 1 MiB, finite or endless, fails at once naming the URL', async () => {
    const big = (what: string) => `The OIDC issuer's keys could not be fetched (${what} answered more than 1 MiB); retry later`;
    expectUnavailable(await outcome(preAuth('big').verifyToken(agent, await sign(`${issuer.url}/big`))), big(`OIDC discovery at ${issuer.url}/big/.well-known/openid-configuration`), 3000);
    expectUnavailable(await outcome(preAuth('endless').verifyToken(agent, await sign(`${issuer.url}/endless`))), big(`OIDC discovery at ${issuer.url}/endless/.well-known/openid-configuration`), 3000);
    expectUnavailable(await outcome(preAuth('good', `${issuer.url}/big/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))), big(`the JWKS at ${issuer.url}/big/jwks`), 3000);
    expectUnavailable(await outcome(preAuth('good', `${issuer.url}/endless/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))), big(`the JWKS at ${issuer.url}/endless/jwks`), 3000);
  });

  it('OIDC pre-auth: an issuer that behaves still verifies, by discovery or by a JWKS URL', async () => {
    const token = await sign(`${issuer.url}/good`);
    expect((await preAuth('good').verifyToken(agent, token))?.user).toEqual({ id: 'u1' });
    expect((await preAuth('good', `${issuer.url}/good/jwks`).verifyToken(agent, token))?.user).toEqual({ id: 'u1' });
  });

  it('JWT authentication: a JWKS that stalls or answers without end is a 503 naming the URL, not a 403', async () => {
    const auth = (mode: string) => new AuthService(undefined as never, { jwksUrl: `${issuer.url}/${mode}/jwks`, orgClaim: 'org_id', roleClaim: 'agentry_role', defaultRole: 'member' });
    const token = await sign('any', { org_id: 'org-a' });
    const [slow, endless] = await Promise.all([outcome(auth('slow').authenticate({ bearer: token })), outcome(auth('endless').authenticate({ bearer: token }))]);
    expectUnavailable(slow, `The JWT issuer's keys could not be fetched (the JWKS at ${issuer.url}/slow/jwks did not answer within 5 s); retry later`, within);
    expectUnavailable(endless, `The JWT issuer's keys could not be fetched (the JWKS at ${issuer.url}/endless/jwks answered more than 1 MiB); retry later`, 3000);
  }, 20_000);
});

describe.each(TEST_DBS)('an issuer that answers without end, through the API (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, {
      env: {
        AGENTRY_EGRESS_ALLOW: '127.0.0.1',
        AGENTRY_OIDC_PRE_AUTH_ISSUER: `${issuer.url}/endless`,
        AGENTRY_JWT_JWKS_URL: `${issuer.url}/big/jwks`,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a pre-auth agent's invocation is a 503 naming the discovery URL, and creates no task", async () => {
    const id = await t.createAgent({ use_oidc_pre_auth: true, pre_auth_audiences: ['app'] });
    const r = await t.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'hi' } }, { 'x-user-token': await sign(`${issuer.url}/endless`) });
    expect([r.statusCode, r.json()]).toEqual([
      503,
      { detail: `The OIDC issuer's keys could not be fetched (OIDC discovery at ${issuer.url}/endless/.well-known/openid-configuration answered more than 1 MiB); retry later` },
    ]);
    expect(r.headers['retry-after']).toBe('5');
    expect((await t.req('GET', `/v1/agents/${id}/tasks`)).json().total).toBe(0);
  });

  it('a bearer token is a 503 naming the JWKS URL', async () => {
    const r = await t.req('GET', '/v1/agents', undefined, { 'x-api-key': '', authorization: `Bearer ${await sign('any', { org_id: 'org-a' })}` });
    expect([r.statusCode, r.json()]).toEqual([503, { detail: `The JWT issuer's keys could not be fetched (the JWKS at ${issuer.url}/big/jwks answered more than 1 MiB); retry later` }]);
  });
});
