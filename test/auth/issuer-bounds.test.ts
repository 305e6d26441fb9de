import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/auth.service.js';
import { ISSUER_READ_TIMEOUT_MS, issuerUnavailable } from '../../src/auth/issuer-keys.js';
import { DocumentFetchError } from '../../src/net/document-fetch.js';
import { PreAuthService } from '../../src/auth/pre-auth.service.js';
import { AppError, logOperatorDetail } from '../../src/errors.js';
import { systemClock } from '../../src/lib/clock.js';
import { createEgressPolicy, createSafeFetch } from '../../src/net/index.js';
import { TEST_DBS } from '../support/harness.js';
import { captureLog } from '../support/log-capture.js';
import { api, createAgent, enableWebhook, hook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';
import { startMisbehavingIssuer, type MisbehavingIssuer } from './misbehaving-issuer.js';

/**
 * The issuers' documents the operator configured (OIDC discovery, the JWKS of pre-auth and of JWT authentication)
 * are read within a deadline (5 s, the answer's body included) and a size bound (1 MiB): an issuer that stalls or
 * answers without end fails the verification with a generic 503 (Retry-After: 5) instead of holding it or the memory;
 * the URL and the bound passed go to the service log at warn.
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

/** A 503 that tells the caller nothing of the issuer, and the operator (the log) which URL failed and how. */
function expectUnavailable(o: { error: unknown; ms: number }, issuer: string, reason: string, withinMs: number): void {
  expect(o.error).toBeInstanceOf(AppError);
  const e = o.error as AppError;
  expect([e.code, e.message, e.retryAfter]).toEqual(['unavailable', 'Identity provider unavailable; retry later', 5]);
  expect(e.operatorDetail).toEqual({ message: `The ${issuer}'s keys could not be fetched; callers are answered 503`, fields: { issuer, reason } });
  expect(o.ms).toBeLessThan(withinMs);
}

describe('issuer documents are read within a deadline and a size bound', () => {
  const safeFetch = createSafeFetch(createEgressPolicy(['127.0.0.1']));
  const preAuth = (mode: string, jwksUrl?: string) => new PreAuthService({ issuer: `${issuer.url}/${mode}`, jwksUrl }, safeFetch, systemClock);
  const within = ISSUER_READ_TIMEOUT_MS + 1500;

  it('OIDC pre-auth: a discovery or a JWKS that stalls, before or after its headers, fails in about 5 s with a generic 503; the log detail names the URL', async () => {
    const [discoveryStalls, discoverySlow, jwksStalls, jwksSlow] = await Promise.all([
      outcome(preAuth('stall').verifyToken(agent, await sign(`${issuer.url}/stall`))),
      outcome(preAuth('slow').verifyToken(agent, await sign(`${issuer.url}/slow`))),
      outcome(preAuth('good', `${issuer.url}/stall/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))),
      outcome(preAuth('good', `${issuer.url}/slow/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))),
    ]);
    const late = (what: string) => `${what} did not answer within 5 s`;
    expectUnavailable(discoveryStalls, 'OIDC issuer', late(`OIDC discovery at ${issuer.url}/stall/.well-known/openid-configuration`), within);
    expectUnavailable(discoverySlow, 'OIDC issuer', late(`OIDC discovery at ${issuer.url}/slow/.well-known/openid-configuration`), within);
    expectUnavailable(jwksStalls, 'OIDC issuer', late(`the JWKS at ${issuer.url}/stall/jwks`), within);
    expectUnavailable(jwksSlow, 'OIDC issuer', late(`the JWKS at ${issuer.url}/slow/jwks`), within);
    // Not before its deadline either.
    expect(discoveryStalls.ms).toBeGreaterThan(ISSUER_READ_TIMEOUT_MS - 100);
  }, 20_000);

  it('OIDC pre-auth: a discovery document or a JWKS past 1 MiB, finite or endless, fails at once; the log detail names the URL', async () => {
    const big = (what: string) => `${what} answered more than 1 MiB`;
    expectUnavailable(await outcome(preAuth('big').verifyToken(agent, await sign(`${issuer.url}/big`))), 'OIDC issuer', big(`OIDC discovery at ${issuer.url}/big/.well-known/openid-configuration`), 3000);
    expectUnavailable(await outcome(preAuth('endless').verifyToken(agent, await sign(`${issuer.url}/endless`))), 'OIDC issuer', big(`OIDC discovery at ${issuer.url}/endless/.well-known/openid-configuration`), 3000);
    expectUnavailable(await outcome(preAuth('good', `${issuer.url}/big/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))), 'OIDC issuer', big(`the JWKS at ${issuer.url}/big/jwks`), 3000);
    expectUnavailable(await outcome(preAuth('good', `${issuer.url}/endless/jwks`).verifyToken(agent, await sign(`${issuer.url}/good`))), 'OIDC issuer', big(`the JWKS at ${issuer.url}/endless/jwks`), 3000);
  });

  it('OIDC pre-auth: an issuer that behaves still verifies, by discovery or by a JWKS URL', async () => {
    const token = await sign(`${issuer.url}/good`);
    expect((await preAuth('good').verifyToken(agent, token))?.user).toEqual({ id: 'u1' });
    expect((await preAuth('good', `${issuer.url}/good/jwks`).verifyToken(agent, token))?.user).toEqual({ id: 'u1' });
  });

  it('JWT authentication: a JWKS that stalls or answers without end is a generic 503 (not a 403); the log detail names the URL', async () => {
    const auth = (mode: string) => new AuthService(undefined as never, { jwksUrl: `${issuer.url}/${mode}/jwks`, orgClaim: 'org_id', roleClaim: 'agentry_role', defaultRole: 'member' });
    const token = await sign('any', { org_id: 'org-a' });
    const [slow, endless] = await Promise.all([outcome(auth('slow').authenticate({ bearer: token })), outcome(auth('endless').authenticate({ bearer: token }))]);
    expectUnavailable(slow, 'JWT issuer', `the JWKS at ${issuer.url}/slow/jwks did not answer within 5 s`, within);
    expectUnavailable(endless, 'JWT issuer', `the JWKS at ${issuer.url}/endless/jwks answered more than 1 MiB`, 3000);
  }, 20_000);

  it("JWT authentication: a JWKS URL with user info (which fetch refuses) is reported without the URL's user info or query", async () => {
    const jwksUrl = `${issuer.url.replace('//', '//ops:hunter2@')}/good/jwks?token=s3cret`;
    const auth = new AuthService(undefined as never, { jwksUrl, orgClaim: 'org_id', roleClaim: 'agentry_role', defaultRole: 'member' });
    const { error } = await outcome(auth.authenticate({ bearer: await sign('any', { org_id: 'org-a' }) }));
    const reason = (error as AppError).operatorDetail?.fields.reason;
    expect(reason).toMatch(new RegExp(`^the JWKS at ${issuer.url}/good/jwks could not be fetched: .*credentials.*: ${issuer.url}/good/jwks$`));
    expect(reason).not.toMatch(/hunter2|s3cret|ops:/);
  });
});

describe.each(TEST_DBS)('an issuer that answers without end, through the API and the public webhook URL (%s)', (kind) => {
  let w: WebhookWorld;
  const captured = captureLog('warn');
  const warnings = () => captured.lines.filter((l) => l.level === 40);
  beforeAll(async () => {
    w = await startWebhookWorld(
      kind,
      {
        AGENTRY_OIDC_PRE_AUTH_ISSUER: `${issuer.url}/endless`,
        // A credential in the URL's query must stay out of the log as out of the answer.
        AGENTRY_JWT_JWKS_URL: `${issuer.url}/big/jwks?token=s3cret`,
      },
      captured.log,
    );
  });
  afterAll(async () => {
    await w?.close();
  });

  const generic = { detail: 'Identity provider unavailable; retry later' };

  it("a pre-auth agent's invocation, by REST or a public webhook (either transport), is a generic 503; the log names the URL once a failure", async () => {
    const id = await createAgent(w, { use_oidc_pre_auth: true, pre_auth_audiences: ['app'] });
    const publicUrl = await enableWebhook(w, id);
    const token = await sign(`${issuer.url}/endless`);
    const discoveryTooBig = `OIDC discovery at ${issuer.url}/endless/.well-known/openid-configuration answered more than 1 MiB`;
    captured.lines.length = 0;
    const rest = await fetch(`${w.api}/v1/agents/${id}/invoke`, {
      method: 'POST',
      headers: { 'x-api-key': w.keyA, 'x-user-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { text: 'hi' } }),
    });
    expect([rest.status, await rest.json(), rest.headers.get('retry-after')]).toEqual([503, generic, '5']);
    const fastLane = await hook(w, publicUrl, { json: { prompt: 'hi' }, headers: { 'x-user-token': token } });
    const form = await hook(w, publicUrl, { form: { prompt: 'hi' }, headers: { 'x-user-token': token } });
    for (const r of [fastLane, form]) expect([r.status, r.json, r.headers.get('retry-after')]).toEqual([503, generic, '5']);
    expect((await api(w, 'GET', `/v1/agents/${id}/tasks`)).json.total).toBe(0);
    // Each call fetched the discovery document again and failed: one warning each, with the URL and the cause.
    expect(warnings().map((l) => [l.msg, l.issuer, l.reason])).toEqual(
      Array.from({ length: 3 }, () => ["The OIDC issuer's keys could not be fetched; callers are answered 503", 'OIDC issuer', discoveryTooBig]),
    );
  });

  it('requests that waited on one failed fetch log it once', () => {
    const failure = new DocumentFetchError('the JWKS at http://idp.example/jwks answered more than 1 MiB');
    const log = captureLog('warn');
    for (let i = 0; i < 3; i++) logOperatorDetail(log.log, issuerUnavailable(failure, 'JWT issuer'));
    logOperatorDetail(log.log, issuerUnavailable(new DocumentFetchError('the JWKS at http://idp.example/jwks did not answer within 5 s'), 'JWT issuer'));
    expect(log.lines.map((l) => l.reason)).toEqual(['the JWKS at http://idp.example/jwks answered more than 1 MiB', 'the JWKS at http://idp.example/jwks did not answer within 5 s']);
  });

  it('a bearer token is a generic 503; the log names the JWKS URL without its query', async () => {
    captured.lines.length = 0;
    const r = await fetch(`${w.api}/v1/agents`, { headers: { authorization: `Bearer ${await sign('any', { org_id: 'org-a' })}` } });
    expect([r.status, await r.json(), r.headers.get('retry-after')]).toEqual([503, generic, '5']);
    expect(warnings().map((l) => [l.issuer, l.reason])).toEqual([['JWT issuer', `the JWKS at ${issuer.url}/big/jwks answered more than 1 MiB`]]);
    expect(JSON.stringify(captured.lines)).not.toMatch(/s3cret/);
  });
});
