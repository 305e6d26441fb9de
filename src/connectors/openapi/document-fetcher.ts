import { AppError } from '../../errors.js';
import { isEgressRefused, type SafeFetch } from '../../net/index.js';

/**
 * Fetches an OpenAPI document for an import by URL (`url`): through the egress-checked fetch (a tenant's URL
 * must not reach internal addresses), with a size cap and a deadline. Problems are a 422 on `url`, like any
 * other bad input of the import, since the caller can fix them.
 */
export class OpenApiDocumentFetcher {
  constructor(
    private readonly fetch: SafeFetch,
    private readonly limits: { maxBytes: number; timeoutMs: number },
  ) {}

  async fetchText(url: string, signal?: AbortSignal): Promise<{ text: string; size: number }> {
    const timeout = AbortSignal.timeout(this.limits.timeoutMs);
    const loc = ['body', 'url'];
    let res: Response;
    try {
      res = await this.fetch(url, { headers: { accept: 'application/json, application/yaml, text/yaml, */*;q=0.5' }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (e) {
      if (isEgressRefused(e)) throw AppError.invalid(loc, (e as Error).message);
      if (signal?.aborted) throw e;
      throw AppError.invalid(loc, timeout.aborted ? `Fetching the document timed out after ${this.limits.timeoutMs} ms` : `Could not fetch the document: ${(e as Error).message}`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw AppError.invalid(loc, `Fetching the document answered HTTP ${res.status}`);
    }
    const tooLarge = () => AppError.invalid(loc, `The document is larger than the limit of ${this.limits.maxBytes} bytes`);
    if (Number(res.headers.get('content-length') ?? NaN) > this.limits.maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > this.limits.maxBytes) {
        await res.body?.cancel().catch(() => {});
        throw tooLarge();
      }
      parts.push(chunk);
    }
    return { text: Buffer.concat(parts).toString('utf8'), size };
  }
}
