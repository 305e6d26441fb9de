import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Request URLs can carry credentials (the webhook secret in the path, `x-api-key` in the query string),
 * so the request serializer masks them; headers that carry keys are redacted.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\/wh_[A-Za-z0-9_-]+/g, '/wh_[REDACTED]')
    .replace(/([?&](?:x-api-key|api_key|sig|token)=)[^&#]*/gi, '$1[REDACTED]');
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', '*.llm_credentials', '*.api_key', '*.password', '*.client_secret', '*.token'],
      censor: '[REDACTED]',
    },
    serializers: {
      req: (req: { id?: string; method?: string; url?: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url ?? '') }),
    },
  });
}
