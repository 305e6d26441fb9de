import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

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

/**
 * `format: 'pretty'` (AGENTRY_LOG_FORMAT) writes coloured single lines for a person at a terminal, synchronously on
 * this thread (no transport worker): meant for development, where a few microseconds a line do not matter.
 */
export function createLogger(level: string, format: 'json' | 'pretty' = 'json', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', '*.llm_credentials', '*.api_key', '*.password', '*.client_secret', '*.token'],
      censor: '[REDACTED]',
    },
    serializers: {
      req: (req: { id?: string; method?: string; url?: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url ?? '') }),
    },
  };
  if (format === 'pretty') return pino(options, pretty({ colorize: process.stdout.isTTY === true, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
  return destination ? pino(options, destination) : pino(options);
}
