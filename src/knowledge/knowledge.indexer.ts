import { hostname } from 'node:os';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { Startable } from '../lib/lifecycle.js';
import { chunkText, DEFAULT_CHUNKING } from './chunker.js';
import type { ChunkStoreRepository, NewChunk } from './chunk-store.repository.js';
import { DocumentReadError, type DocumentReader } from './document-reader.js';
import { embeddingText, type EmbeddingProvider } from './embeddings.js';
import type { JobLease, JobQueueRepository, JobRow } from './job-queue.repository.js';
import type { JobWakeups } from './job-wakeups.js';
import type { DocumentRow, KnowledgeRepository } from './knowledge.repository.js';
import { INDEX_JOB } from './knowledge.service.js';

export interface IndexerOptions {
  /** Jobs indexed at the same time by this process. */
  concurrency: number;
  leaseMs: number;
  /** How often an idle loop looks for work another process queued. */
  pollMs: number;
  /** First retry delay after a transient failure; doubles with each attempt. */
  retryBaseMs: number;
}

/**
 * The worker-role component that indexes documents: claims `kb_index` jobs with a lease, keeps the lease alive
 * while it works, and writes the chunks and the document's final status in one transaction that only commits while
 * its fence still holds. A worker that dies leaves a lease that runs out; another worker claims the job again
 * (attempt + 1), and a job out of attempts ends the document `error` with the reason. Nothing waits silently.
 */
export class KnowledgeIndexer implements Startable {
  private readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`;
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly inFlight = new Map<string, { lease: JobLease; abort: AbortController }>();
  private lastSweep = 0;
  /** A wake-up that came while every loop was busy: the next loop about to sleep looks again instead. */
  private wakePending = false;

  constructor(
    private readonly jobs: JobQueueRepository,
    private readonly repo: KnowledgeRepository,
    private readonly chunks: ChunkStoreRepository,
    private readonly reader: DocumentReader,
    private readonly embeddings: EmbeddingProvider | undefined,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: IndexerOptions,
    private readonly wakeups?: JobWakeups,
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.loops = Array.from({ length: this.opts.concurrency }, () => this.loop());
    await this.wakeups?.listen(() => this.wake());
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.wakeups?.close();
    for (const { abort } of this.inFlight.values()) abort.abort(new Error('worker stopping'));
    this.wake();
    await Promise.allSettled(this.loops);
    this.loops = [];
  }

  /** Starts idle loops at once (a job was just committed in this process). */
  wake(): void {
    if (!this.waiters.size) this.wakePending = true;
    for (const w of [...this.waiters]) w();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let job: JobRow | undefined;
      try {
        // Any loop may sweep (one that is busy on a long document does not hold it up), at most once per poll.
        if (this.clock.now() - this.lastSweep >= this.opts.pollMs) {
          this.lastSweep = this.clock.now();
          await this.sweep();
        }
        const now = this.clock.now();
        if (await this.jobs.hasClaimable(INDEX_JOB, now)) {
          job =
            (await this.jobs.claimDue(INDEX_JOB, this.owner, now, this.opts.leaseMs)) ??
            (await this.jobs.claimExpired(INDEX_JOB, this.owner, now, this.opts.leaseMs));
        }
      } catch (e) {
        this.log.error({ err: e }, 'indexer could not claim a job');
      }
      if (job) {
        // A failure to record the outcome (database down) must not end the loop: the lease runs out and the job
        // is claimed again.
        await this.run(job).catch((e) => this.log.error({ err: e, job_id: job.id }, 'indexing outcome could not be recorded'));
        continue;
      }
      if (this.wakePending) {
        this.wakePending = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          this.waiters.delete(done);
          resolve();
        };
        const t = setTimeout(done, this.opts.pollMs);
        this.waiters.add(done);
      });
    }
  }

  /** Jobs whose workers died on every attempt: their documents end `error` with the reason. */
  private async sweep(): Promise<void> {
    const ended = await this.jobs.sweepExhausted(INDEX_JOB, this.clock.now(), (n) => `Indexing stopped: the worker processing this document stopped ${n} times`);
    for (const j of ended) {
      await this.repo.setOutcome(this.repo.k, j.organization_id, j.ref_id, { status: 'error', status_reason: j.last_error }, this.clock.now());
      this.log.warn({ job_id: j.id, document_id: j.ref_id }, 'indexing job out of attempts');
    }
  }

  private async run(job: JobRow): Promise<void> {
    const lease: JobLease = { id: job.id, organizationId: job.organization_id, fence: job.fence };
    const abort = new AbortController();
    this.inFlight.set(job.id, { lease, abort });
    const beat = setInterval(() => {
      this.jobs.heartbeat(lease, this.clock.now(), this.opts.leaseMs).then(
        (held) => {
          if (!held) abort.abort(new Error('lease lost'));
        },
        (e) => this.log.warn({ err: e, job_id: job.id }, 'indexing heartbeat failed'),
      );
    }, Math.max(250, Math.floor(this.opts.leaseMs / 3)));
    try {
      await this.index(job, lease, abort.signal);
    } catch (e) {
      if (abort.signal.aborted) {
        // Shutting down: hand the job back untouched. Lease lost: a newer attempt owns it; write nothing.
        if (!this.running) await this.handBack(job, lease);
      } else {
        await this.failed(job, lease, e);
      }
    } finally {
      clearInterval(beat);
      this.inFlight.delete(job.id);
    }
  }

  private async index(job: JobRow, lease: JobLease, signal: AbortSignal): Promise<void> {
    const org = job.organization_id;
    const doc = await this.repo.findDocumentById(org, job.ref_id);
    if (!doc) {
      await this.jobs.finish(lease, { status: 'done' }, this.clock.now(), async () => {});
      return;
    }
    if (!(await this.repo.markIndexing(org, doc.id, job.id, lease.fence, this.clock.now()))) return;
    const text = doc.raw_text ?? (await this.fetchText(doc, job, lease, signal));
    signal.throwIfAborted();
    const pieces = chunkText(text, { ...DEFAULT_CHUNKING, table: doc.mime_type === 'text/csv' });
    if (!pieces.length) throw new DocumentReadError('The document contains no text to index', true);
    const vectors = this.embeddings ? await this.embeddings.embed(pieces.map((p) => embeddingText(p.heading, p.content)), signal) : null;
    signal.throwIfAborted();
    const chunks: NewChunk[] = pieces.map((p, i) => ({ ord: i, heading: p.heading, content: p.content, embedding: vectors?.[i] ?? null }));
    const now = this.clock.now();
    const done = await this.jobs.finish(lease, { status: 'done' }, now, async (k) => {
      await this.chunks.deleteForDocuments(k, org, [doc.id]);
      if (await this.repo.setOutcome(k, org, doc.id, { status: 'ready', status_reason: null, chunks_count: chunks.length, indexed_at: now }, now)) {
        await this.chunks.insert(k, org, doc.kb_id, doc.id, chunks, this.embeddings?.model ?? null);
      }
    });
    if (done) this.log.info({ document_id: doc.id, chunks: chunks.length, attempt: job.attempts }, 'document indexed');
  }

  private async fetchText(doc: DocumentRow, job: JobRow, lease: JobLease, signal: AbortSignal): Promise<string> {
    if (!doc.document_url) throw new DocumentReadError('The document has neither text nor a URL', true);
    const read = await this.reader.fetchUrl(job.organization_id, doc.document_url, signal);
    // Kept so an attempt after a crash indexes what was fetched instead of fetching again.
    await this.repo.saveText(job.organization_id, doc.id, job.id, lease.fence, read.text, read.mimeType, null, this.clock.now());
    doc.mime_type = read.mimeType;
    return read.text;
  }

  /** Shutting down mid-job: the job goes back to the queue with its attempt refunded, the document with it. */
  private async handBack(job: JobRow, lease: JobLease): Promise<void> {
    try {
      const now = this.clock.now();
      if (await this.jobs.release(lease, now)) {
        await this.repo.setOutcome(this.repo.k, job.organization_id, job.ref_id, { status: 'queued', status_reason: null }, now);
      }
    } catch (e) {
      this.log.warn({ err: e, job_id: job.id }, 'could not hand an indexing job back; its lease will run out');
    }
  }

  /** A permanent failure, or the last attempt: the document ends `error`; otherwise it is retried later. */
  private async failed(job: JobRow, lease: JobLease, e: unknown): Promise<void> {
    const permanent = e instanceof DocumentReadError && e.permanent;
    const reason = e instanceof Error ? e.message : String(e);
    const now = this.clock.now();
    if (!permanent && job.attempts < job.max_attempts) {
      const at = now + this.opts.retryBaseMs * 2 ** (job.attempts - 1);
      if (await this.jobs.retryLater(lease, at, reason, now)) {
        await this.repo.setOutcome(this.repo.k, job.organization_id, job.ref_id, { status: 'queued', status_reason: `Attempt ${job.attempts} failed (${reason}); retrying` }, now);
      }
      this.log.warn({ err: e, job_id: job.id, attempt: job.attempts }, 'indexing failed; will retry');
      return;
    }
    const status_reason = permanent ? reason : `Indexing failed after ${job.attempts} attempts: ${reason}`;
    await this.jobs.finish(lease, { status: 'error', error: status_reason }, now, async (k) => {
      await this.repo.setOutcome(k, job.organization_id, job.ref_id, { status: 'error', status_reason }, now);
    });
    this.log.warn({ err: e, job_id: job.id, document_id: job.ref_id }, 'document could not be indexed');
  }
}
