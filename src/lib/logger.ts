import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Request URLs can carry credentials (the webhook secret in the path, `x-api-key` in the query string, the OAuth
 * `code` and `state` of the MCP authorization callback),
 * so the request serializer masks them; headers that carry keys are redacted.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\/wh_[A-Za-z0-9_-]+/g, '/wh_[REDACTED]')
    .replace(/([?&](?:x-api-key|api_key|sig|token|code|state)=)[^&#]*/gi, '$1[REDACTED]');
}

const SECRET_FIELDS = ['llm_credentials', 'api_key', 'password', 'client_secret', 'token'];

/**
 * `format: 'pretty'` (AGENTRY_LOG_FORMAT) writes coloured single lines for a person at a terminal, synchronously on
 * this thread (no transport worker): meant for development, where a few microseconds a line do not matter.
 */
export function createLogger(level: string, format: 'json' | 'pretty' = 'json', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      // Each secret-bearing name at the top of a line's fields and one level down (pino's `*` is one level only).
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', ...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)],
      censor: '[REDACTED]',
    },
    serializers: {
      req: (req: { id?: string; method?: string; url?: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url ?? '') }),
    },
  };
  if (format === 'pretty') {
    const pretty = loadPretty()({ colorize: !destination && process.stdout.isTTY === true, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l', ...(destination && { destination }) });
    return pino(options, pretty);
  }
  return destination ? pino(options, destination) : pino(options);
}

/** pino-pretty only where it is used (`format: 'pretty'`): a production process never loads it (~0.7 MB resident). */
function loadPretty(): typeof import('pino-pretty') {
  return createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
}
