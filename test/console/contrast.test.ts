import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ROOT } from '../../src/console/console.plugin.js';

/** WCAG 2 contrast of the console's colour pairs, in the light and the dark scheme, read from app.css itself. */
const css = readFileSync(join(CONSOLE_ROOT, 'app.css'), 'utf8');

function variables(block: string): Record<string, string> {
  return Object.fromEntries([...block.matchAll(/--([\w-]+):\s*(#[0-9a-fA-F]{6})/g)].map((m) => [m[1], m[2]]));
}
const light = variables(css.slice(css.indexOf(':root {'), css.indexOf('@media (prefers-color-scheme: dark)')));
const dark = { ...light, ...variables(css.slice(css.indexOf('@media (prefers-color-scheme: dark)'), css.indexOf('* {'))) };

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/** [foreground, background, minimum]: 4.5 for text, 3 for focus rings and control borders. */
const PAIRS: [string, string, number][] = [
  ['text', 'bg', 4.5],
  ['text', 'surface', 4.5],
  ['text', 'surface-2', 4.5],
  ['text', 'code-bg', 4.5],
  ['muted', 'bg', 4.5],
  ['muted', 'surface', 4.5],
  ['muted', 'surface-2', 4.5],
  ['link', 'surface', 4.5],
  ['link', 'surface-2', 4.5],
  ['link', 'bg', 4.5],
  ['primary-text', 'primary', 4.5],
  ['danger-text', 'danger', 4.5],
  ['danger-fg', 'surface', 4.5],
  ['danger-fg', 'bg', 4.5],
  ['ok-fg', 'ok-bg', 4.5],
  ['ok-fg', 'surface', 4.5],
  ['bad-fg', 'bad-bg', 4.5],
  ['bad-fg', 'surface', 4.5],
  ['run-fg', 'run-bg', 4.5],
  ['wait-fg', 'wait-bg', 4.5],
  ['pause-fg', 'pause-bg', 4.5],
  ['neutral-fg', 'neutral-bg', 4.5],
  ['focus', 'surface', 3],
  ['focus', 'bg', 3],
  ['control-border', 'surface', 3],
];

describe('console colour contrast', () => {
  it('defines every colour it checks in both schemes', () => {
    for (const [fg, bg] of PAIRS) for (const scheme of [light, dark]) expect(scheme[fg] && scheme[bg], `${fg} on ${bg}`).toBeTruthy();
  });
  it.each([
    ['light', light],
    ['dark', dark],
  ] as const)('meets WCAG AA in the %s scheme', (_name, scheme) => {
    const failing = PAIRS.filter(([fg, bg, min]) => contrast(scheme[fg], scheme[bg]) < min).map(
      ([fg, bg, min]) => `${fg} on ${bg}: ${contrast(scheme[fg], scheme[bg]).toFixed(2)} < ${min}`,
    );
    expect(failing).toEqual([]);
  });
});
