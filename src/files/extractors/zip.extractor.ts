import { KIND_INFO } from '../file-kinds.js';
import { unpack } from '../archive.js';
import type { Extractor } from './extractor.js';

/**
 * Every entry's text under its path, recursively. Entries of types we do not accept are listed as skipped rather
 * than refusing the whole archive: the caller sent a ZIP, which is accepted, and the rest of it is still useful.
 */
export const zipExtractor: Extractor = async (bytes, ctx) => {
  const entries = unpack(bytes, ctx.budget, ctx.depth + 1);
  const parts: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const found = await ctx.extractNested(entry.name, entry.bytes, ctx.depth + 1);
    if (!found) {
      parts.push(`--- ${entry.name} (skipped: not an accepted file type) ---`);
      continue;
    }
    parts.push(`--- ${entry.name} (${KIND_INFO[found.kind].label}) ---\n${found.text}`.trimEnd());
  }
  return parts.join('\n\n');
};
