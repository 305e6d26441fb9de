import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted HTTP receiver on 127.0.0.1 for notification tests (webhook targets, callback URLs, Slack incoming
 * webhooks). Every request is recorded (`requests`: method, path, headers, raw body); `handle` decides the answer:
 * `{ status, headers, body }`, or `{ hang: true }` to leave the request unanswered until `release()` or close.
 * `listen(port)` can reopen on the same port after `close()` (a receiver that was down and comes back).
 */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type ReceiverAnswer = { status?: number; headers?: Record<string, string>; body?: string } | { hang: true };

export class NotificationReceiver {
  readonly requests: ReceivedRequest[] = [];
  handle: (req: ReceivedRequest, n: number) => ReceiverAnswer = () => ({ status: 200 });
  private server?: Server;
  private hanging: ServerResponse[] = [];
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Requests left unanswered right now. */
  get pending(): number {
    return this.hanging.filter((r) => !r.writableEnded && !r.destroyed).length;
  }

  async listen(port = this.port): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: ReceivedRequest = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.requests.push(r);
        const a = this.handle(r, this.requests.length);
        if ('hang' in a) {
          this.hanging.push(res);
          return;
        }
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers });
        res.end(a.body ?? 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Answers every hanging request with 200. */
  release(): void {
    for (const res of this.hanging.splice(0)) if (!res.writableEnded && !res.destroyed) res.end('late');
  }

  async waitFor(n: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    const end = Date.now() + timeoutMs;
    while (this.requests.length < n) {
      if (Date.now() > end) throw new Error(`receiver got ${this.requests.length} of ${n} requests`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.requests;
  }

  async close(): Promise<void> {
    for (const res of this.hanging.splice(0)) res.destroy();
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

export async function startReceiver(): Promise<NotificationReceiver> {
  return new NotificationReceiver().listen(0);
}
