import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore, signV4 } from '../../src/files/s3-blob-store.js';
import { s3Env, startS3Server, type FakeS3 } from '../fakes/s3-server.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { makePdf } from './builders.js';

describe('SigV4 signing', () => {
  // The get-vanilla case of the AWS Signature Version 4 test suite.
  it('matches the AWS test suite', () => {
    const headers = signV4({
      method: 'GET',
      url: new URL('https://example.amazonaws.com/'),
      headers: {},
      payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      service: 'service',
      region: 'us-east-1',
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      date: new Date('2015-08-30T12:36:00Z'),
    });
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });
});

describe.each(TEST_DBS)('files on S3-compatible storage (%s)', (kind) => {
  const creds = { accessKeyId: 'AKTEST', secretAccessKey: 'secret/key+value', region: 'eu-west-3' };
  let s3: FakeS3;
  let t: TestApp;
  beforeAll(async () => {
    s3 = await startS3Server(creds);
    t = await createTestApp(kind, {
      env: s3Env(s3, creds, 'agentry-files'),
    });
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it('stores uploads in the bucket, serves them at their presigned URL, and discards them', async () => {
    const pdf = makePdf('in the bucket OSPREY');
    const [f] = await t.c.files.ingest(t.orgA, [{ name: 'b.pdf', bytes: pdf }]);
    expect(s3.objects.get(`agentry-files/${t.orgA}/${f!.id}`)?.equals(pdf)).toBe(true);
    const u = new URL(f!.url);
    const r = await t.app.inject({ method: 'GET', url: u.pathname + u.search });
    expect(r.statusCode).toBe(200);
    expect(r.rawPayload.equals(pdf)).toBe(true);
    await t.c.files.discard(t.orgA, [f!]);
    expect(s3.objects.has(`agentry-files/${t.orgA}/${f!.id}`)).toBe(false);
    expect(s3.rejected).toBe(0);
  });

  it('fails loudly when the credentials are wrong', async () => {
    const store = new S3BlobStore({ endpoint: s3.url, bucket: 'agentry-files', region: creds.region, accessKeyId: 'AKTEST', secretAccessKey: 'wrong', timeoutMs: 5000, maxObjectBytes: 1024 });
    await expect(store.put('x/y', Buffer.from('z'), 'text/plain')).rejects.toThrow(/403/);
    expect(s3.rejected).toBe(1);
  });
});
