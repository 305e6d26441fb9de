import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';

/** Collects what a logger writes. */
function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('createLogger', () => {
  it('writes one JSON object a line, with the webhook secret and api keys redacted', () => {
    const out = sink();
    const log = createLogger('info', 'json', out.stream);
    log.info({ req: { id: 'r1', method: 'POST', url: '/wh_s3cr3t?x-api-key=k1' }, api_key: 'k2' }, 'incoming request');
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'incoming request', req: { url: '/wh_[REDACTED]?x-api-key=[REDACTED]' }, api_key: '[REDACTED]' });
    expect(out.text()).not.toMatch(/s3cr3t|k1|k2/);
  });

  it('pretty: single readable lines (pino-pretty, loaded for this format only), redacted the same way', () => {
    const out = sink();
    const log = createLogger('info', 'pretty', out.stream);
    log.info({ req: { id: 'r1', method: 'POST', url: '/wh_s3cr3t' } }, 'incoming request');
    const text = out.text();
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: incoming request\n/);
    expect(text).toContain('/wh_[REDACTED]');
    expect(text).not.toContain('s3cr3t');
    expect(() => JSON.parse(text)).toThrow();
  });
});
