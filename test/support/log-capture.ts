import { createLogger, type Logger } from '../../src/lib/logger.js';

/** A service logger (JSON lines, the production format) whose lines a test reads, from `level` up. */
export function captureLog(level = 'warn'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(level, 'json', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}
