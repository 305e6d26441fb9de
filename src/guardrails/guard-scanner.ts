import { ThreadPool, type ThreadOutcome } from '../lib/thread-pool.js';
import { detectInjection, type InjectionVerdict } from './injection/injection-detector.js';
import { detectPii, type PiiScanOptions } from './pii/pii-detectors.js';
import { groupPii, type PiiFound } from './pii/pii-found.js';
import { GuardrailRefusal, pieceLabel, type ContentPiece, type GuardName } from './guardrail.types.js';

/**
 * Where the guards' detectors run. They are linear (about 0.2-0.4 s of CPU per MB) but a request body may be 10 MiB:
 * on the event loop, one large input, file text or tool result would stall every other request and run of the
 * process for seconds. A text longer than `inlineMaxChars` is therefore scanned on a worker thread
 * (guard-scan.worker.ts, through thread-pool.ts: a deadline per job, a heap ceiling, threads started on the first
 * large text and let go when idle, waiting jobs queued per organization and served in turn); a shorter one, the
 * common case, is scanned here at once, as before. Both paths call the same functions, so the detections are the
 * same. A large text is never scanned here, even when the threads are busy: it waits for one (bounded by the
 * organization's queue and each job's deadline), and a text that could not be screened stops the task
 * (GuardrailRefusal), as a refused one does: nothing unscreened reaches the model.
 */

export interface GuardScanOptions {
  /** Texts up to this many characters are scanned on the event loop (docs/decisions.md: the measured crossover). */
  inlineMaxChars: number;
  threads: number;
  /** One job's time on its thread before the thread is terminated and the text's task stopped. */
  timeoutMs: number;
  heapMb: number;
  /** Large texts one organization may have waiting; beyond, the next one stops its task at once. */
  queuePerOrg: number;
  /** A thread with no job for this long is let go (its memory returned). */
  idleMs: number;
}

export const DEFAULT_GUARD_SCAN: GuardScanOptions = { inlineMaxChars: 16_384, threads: 1, timeoutMs: 30_000, heapMb: 512, queuePerOrg: 32, idleMs: 60_000 };

/** A job of the scanning thread (guard-scan.worker.ts) and its answer. */
export type GuardScanRequest = { op: 'pii'; text: string; region: string } | { op: 'injection'; text: string };
export type GuardScanReply = { op: 'pii'; found: PiiFound } | { op: 'injection'; verdict: InjectionVerdict };

/** One run's access to the detectors. Throws GuardrailRefusal when a large text could not be screened. */
export interface GuardScan {
  pii(text: string, opts: PiiScanOptions, piece: ContentPiece, signal: AbortSignal): PiiFound | Promise<PiiFound>;
  injection(text: string, piece: ContentPiece, signal: AbortSignal): InjectionVerdict | Promise<InjectionVerdict>;
}

/** Every text on the event loop, whatever its size: for direct uses of a guard (tests, small fixed texts). */
export const INLINE_SCAN: GuardScan = {
  pii: (text, opts) => groupPii(detectPii(text, opts)),
  injection: (text) => detectInjection(text),
};

const GUARD_LABELS: Record<GuardName, string> = { pii: 'PII', prompt_injection: 'prompt-injection', moderation: 'moderation' };

export class GuardScanner {
  private readonly opts: GuardScanOptions;
  private readonly pool: ThreadPool<GuardScanRequest, GuardScanReply>;
  private inlineCount = 0;
  private threadedCount = 0;
  private inFlight = 0;

  constructor(opts: Partial<GuardScanOptions> = {}) {
    this.opts = { ...DEFAULT_GUARD_SCAN, ...opts };
    this.pool = new ThreadPool({
      base: import.meta.url,
      module: './guard-scan.worker',
      doing: 'text screening',
      threads: this.opts.threads,
      timeoutMs: this.opts.timeoutMs,
      heapMb: this.opts.heapMb,
      queuePerOwner: this.opts.queuePerOrg,
      idleMs: this.opts.idleMs,
    });
  }

  /** The scan of one organization's runs (its large texts wait in its own queue). */
  forOwner(owner: string): GuardScan {
    return {
      pii: (text, opts, piece, signal) => {
        if (text.length <= this.opts.inlineMaxChars) return this.inline(() => groupPii(detectPii(text, opts)));
        return this.threaded(owner, 'pii', piece, signal, { op: 'pii', text, region: opts.defaultRegion }).then((r) => (r as Extract<GuardScanReply, { op: 'pii' }>).found);
      },
      injection: (text, piece, signal) => {
        if (text.length <= this.opts.inlineMaxChars) return this.inline(() => detectInjection(text));
        return this.threaded(owner, 'prompt_injection', piece, signal, { op: 'injection', text }).then((r) => (r as Extract<GuardScanReply, { op: 'injection' }>).verdict);
      },
    };
  }

  /** Texts scanned here and on a thread since the start, those on a thread or waiting for one now, and the threads alive. */
  stats(): { inline: number; threaded: number; inFlight: number; threads: number } {
    return { inline: this.inlineCount, threaded: this.threadedCount, inFlight: this.inFlight, threads: this.pool.threads };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private inline<T>(scan: () => T): T {
    this.inlineCount++;
    return scan();
  }

  private async threaded(owner: string, guard: GuardName, piece: ContentPiece, signal: AbortSignal, req: GuardScanRequest): Promise<GuardScanReply> {
    this.threadedCount++;
    this.inFlight++;
    const out: ThreadOutcome<GuardScanReply> = await this.pool.run(owner, req, signal).finally(() => this.inFlight--);
    if (out.ok) return out.value;
    // A run whose signal ended the wait is being stopped: its own reason says why.
    if (out.failure === 'cancelled' && signal.aborted) throw signal.reason;
    const size = `${req.text.length.toLocaleString('en-US')} characters`;
    const why = out.failure === 'timeout' ? `it took longer than ${this.opts.timeoutMs / 1000} s` : out.reason;
    throw new GuardrailRefusal(
      guard,
      `The ${GUARD_LABELS[guard]} guardrail could not screen ${pieceLabel(piece)} (${size}): ${why}. ` +
        'The task was stopped before that text reached the LLM.',
    );
  }
}
