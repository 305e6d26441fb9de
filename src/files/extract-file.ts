import { ArchiveBudget, ArchiveLimitError, type ArchiveLimits, type ArchiveSpent } from './archive.js';
import { detectKind, KIND_INFO, type FileKind } from './file-kinds.js';
import { ContentLimitError, type ContentLimits, type ExtractorRegistry } from './extractors/extractor.js';

/** One file to extract, with everything the extraction host needs: it shares no state with the service. */
export interface ExtractJob {
  name: string;
  kind: FileKind;
  bytes: Uint8Array;
  archive: ArchiveLimits;
  /** What earlier files of the same request already spent of the archive budget. */
  spent: ArchiveSpent;
  limits: ContentLimits;
}

/**
 * `too_large`: over a limit (413); `unreadable`: the file is damaged or not what it claims (415); `unavailable`: the
 * host could not take it, which says nothing about the file (503).
 */
export type ExtractFailure = 'too_large' | 'unreadable' | 'unavailable';
export type ExtractOutcome = { ok: true; text: string; spent: ArchiveSpent } | { ok: false; failure: ExtractFailure; reason: string };

/** Runs the extractor registry on one file and its nested entries; never throws for a bad file. */
export async function extractFile(extractors: ExtractorRegistry, job: ExtractJob): Promise<ExtractOutcome> {
  const budget = new ArchiveBudget(job.archive, job.spent);
  try {
    const text = await extract(extractors, job.name, job.kind, job.bytes, 0, budget, job.limits);
    return { ok: true, text, spent: budget.spent };
  } catch (e) {
    if (e instanceof ArchiveLimitError) return { ok: false, failure: 'too_large', reason: `unpacks beyond the archive limits (${e.reason})` };
    if (e instanceof ContentLimitError) return { ok: false, failure: 'too_large', reason: `is too large to read: ${e.message}` };
    return { ok: false, failure: 'unreadable', reason: e instanceof Error ? e.message : String(e) };
  }
}

function extract(
  extractors: ExtractorRegistry,
  name: string,
  kind: FileKind,
  bytes: Uint8Array,
  depth: number,
  budget: ArchiveBudget,
  limits: ContentLimits,
): Promise<string> {
  return extractors[kind](bytes, {
    name,
    kind,
    depth,
    budget,
    limits,
    extractNested: async (entryName, entryBytes, entryDepth) => {
      const entryKind = await detectKind(entryName, entryBytes);
      if (!entryKind) return undefined;
      try {
        return { kind: entryKind, text: await extract(extractors, entryName, entryKind, entryBytes, entryDepth, budget, limits) };
      } catch (e) {
        // A damaged or oversized entry costs only its own text; the archive limits still refuse the whole upload.
        if (e instanceof ArchiveLimitError) throw e;
        if (e instanceof ContentLimitError) return { kind: entryKind, text: `(not read: ${e.message})` };
        return { kind: entryKind, text: `(could not be read as ${KIND_INFO[entryKind].label})` };
      }
    },
  });
}
