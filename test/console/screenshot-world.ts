import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { ConsoleWorld } from './browser-harness.js';

/**
 * What the screenshot scripts (take-screenshots.ts, take-workspace-screenshots.ts, take-resource-screenshots.ts)
 * share: the output directory, the support-desk world they photograph, and the camera.
 */

/** The directory named on the command line (default docs/screenshots), created if missing. */
export function screenshotDir(): string {
  const out = resolve(process.argv[2] ?? 'docs/screenshots');
  mkdirSync(out, { recursive: true });
  return out;
}

export const WORD_COUNT_CODE = 'async function run({ text }) { return { words: text.split(/\\s+/).filter(Boolean).length }; }';

/** The `word_count` custom function (`code` lets a page show a longer body). */
export async function seedWordCount(w: ConsoleWorld, code = WORD_COUNT_CODE): Promise<{ id: string }> {
  const r = await w.api('POST', '/v1/custom_functions', {
    name: 'word_count',
    description: 'Counts the words of a text',
    code,
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  });
  return r.body;
}

/** The "Support triage" agent with `word_count` as its tool; the model calls the tool for prompts about a printer. */
export async function seedTriage(w: ConsoleWorld): Promise<{ id: string; webhook_url: string }> {
  const fn = await seedWordCount(w);
  const triage = await w.createAgent({
    name: 'Support triage',
    icon: '🛟',
    description: 'Reads incoming tickets, counts what matters and drafts a first answer.',
    instructions: { role: ['You triage customer support tickets'], goal: ['Draft a short, friendly first answer'], general: 'Never promise refunds.' },
    tools: [{ type: 'custom_function', custom_function_id: fn.id }],
  });
  w.model.when('printer', '[tool:word_count]');
  return triage;
}

/** An agent whose model is a port nothing listens on: each of its runs fails. */
export function seedBrokenAgent(w: ConsoleWorld, fields: Record<string, unknown> = {}): Promise<{ id: string }> {
  return w.createAgent({ name: 'Invoice checker', llm_api_base: 'http://127.0.0.1:9/v1', ...fields });
}

/**
 * Saves a page (the viewport, or the whole page with `fullPage`) or one element as `<out>/<name>.png`, after `settleMs`
 * for transitions and late renders, and prints the path.
 */
export function camera(out: string, settleMs: number) {
  return async (target: Page | Locator, name: string, opts: { fullPage?: boolean } = {}): Promise<void> => {
    const path = `${out}/${name}.png`;
    if ('page' in target) {
      await target.page().waitForTimeout(settleMs);
      await target.screenshot({ path });
    } else {
      await target.waitForTimeout(settleMs);
      await target.screenshot({ path, fullPage: opts.fullPage ?? false });
    }
    console.log(path);
  };
}
