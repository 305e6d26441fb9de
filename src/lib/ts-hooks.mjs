/**
 * Module hooks that let the extraction host (a child process) and worker threads (ts-worker.ts) run from the
 * TypeScript sources (tests, bin/agentry.mjs) without tsx. tsx's loader also transforms the readers' large bundles
 * (pdfjs and its worker, 3 MB with source maps): in the extraction host that cost 2.5-7 s and about 300 MB per fresh
 * process. These hooks strip types from our own .ts files with esbuild
 * (already a dependency, for the build) and leave everything else to Node. From dist/ none of this is loaded.
 */
import { readFile } from 'node:fs/promises';
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

// Loaded once with --import on the main thread (which registers this same file as the hooks module) and once more
// on the hooks thread, where only the exports below matter.
if (isMainThread) register(import.meta.url);

/** Sources import each other as `./x.js`; the file beside the importer is `./x.ts`. */
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
      return next(`${specifier.slice(0, -3)}.ts`, context);
    }
    throw e;
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const { transform } = await import('esbuild');
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: path });
  return { format: 'module', source: code, shortCircuit: true };
}
