import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { cardNetworkValid, ibanValid, luhnValid, ssnValid } from '../../src/guardrails/pii/checksums.js';
import { detectPii } from '../../src/guardrails/pii/pii-detectors.js';
import { PiiVault } from '../../src/guardrails/pii/pii-vault.js';
import { PII_CASES } from './pii-labelled-set.js';

/** Precision and recall of the PII detectors on the labelled set; docs/guardrails.md quotes the printed numbers. */

const OPTS = { defaultRegion: 'US' };

describe('PII detection', () => {
  it('reaches the measured precision and recall on the labelled set', () => {
    const perKind = new Map<string, { tp: number; fp: number; fn: number }>();
    const count = (kind: string) => perKind.get(kind) ?? (perKind.set(kind, { tp: 0, fp: 0, fn: 0 }), perKind.get(kind)!);
    const misses: string[] = [];
    for (const c of PII_CASES) {
      const found = detectPii(c.text, OPTS).map((m) => `${m.kind}\u0000${m.value}`);
      const truth = c.pii.map(([k, v]) => `${k}\u0000${v}`);
      for (const f of found) {
        const [kind] = f.split('\u0000');
        if (truth.includes(f)) count(kind!).tp++;
        else (count(kind!).fp++, misses.push(`false positive ${f.replace('\u0000', ' ')} in: ${c.text}`));
      }
      for (const t of truth) if (!found.includes(t)) (count(t.split('\u0000')[0]!).fn++, misses.push(`missed ${t.replace('\u0000', ' ')}`));
    }
    const total = { tp: 0, fp: 0, fn: 0 };
    const rows = [...perKind.entries()].sort().map(([kind, s]) => {
      total.tp += s.tp;
      total.fp += s.fp;
      total.fn += s.fn;
      return `${kind.padEnd(12)} precision ${(s.tp / (s.tp + s.fp || 1)).toFixed(2)}  recall ${(s.tp / (s.tp + s.fn || 1)).toFixed(2)}  (tp ${s.tp}, fp ${s.fp}, fn ${s.fn})`;
    });
    const precision = total.tp / (total.tp + total.fp);
    const recall = total.tp / (total.tp + total.fn);
    console.log(
      [`PII detection on ${PII_CASES.length} labelled texts:`, ...rows, `${'all'.padEnd(12)} precision ${precision.toFixed(2)}  recall ${recall.toFixed(2)}  (tp ${total.tp}, fp ${total.fp}, fn ${total.fn})`, ...misses].join('\n'),
    );
    expect(precision).toBeGreaterThanOrEqual(0.95);
    expect(recall).toBeGreaterThanOrEqual(0.9);
  });

  it('validates with the published checksums and issuing rules', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(cardNetworkValid('1234567812345670')).toBe(false); // Luhn-valid, but no network issues 12...
    expect(cardNetworkValid('378282246310005')).toBe(true);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false);
    expect(ibanValid('GB82WEST1234569876543')).toBe(false); // wrong length for GB
    expect(ssnValid('536', '22', '1234')).toBe(true);
    for (const [a, g, s] of [['000', '12', '3456'], ['666', '12', '3456'], ['912', '34', '5678'], ['536', '00', '1234'], ['536', '22', '0000'], ['078', '05', '1120']]) {
      expect(ssnValid(a!, g!, s!), `${a}-${g}-${s}`).toBe(false);
    }
  });

  it('gives one value one placeholder, counts per kind, and restores only its own placeholders', () => {
    const v = new PiiVault(OPTS);
    const a = v.mask('ada@example.com and ADA@example.com and bob@example.com, card 4111111111111111');
    expect(a.text).toBe('<EMAIL_1> and <EMAIL_1> and <EMAIL_2>, card <CREDIT_CARD_1>');
    expect(a.kinds).toEqual({ EMAIL: 3, CREDIT_CARD: 1 });
    expect(v.mask('again ada@example.com').text).toBe('again <EMAIL_1>');
    expect(v.restore('to <EMAIL_2>, not <EMAIL_9> nor <b>')).toBe('to bob@example.com, not <EMAIL_9> nor <b>');
    expect(v.restoreDeep({ to: ['<EMAIL_1>'], n: 3, nested: { card: 'x <CREDIT_CARD_1>' } })).toEqual({
      to: ['ada@example.com'],
      n: 3,
      nested: { card: 'x 4111111111111111' },
    });
  });

  it('reads national-format phone numbers in AGENTRY_PII_DEFAULT_REGION, and refuses a region without a numbering plan', () => {
    const text = 'Ring our London desk on 020 7946 0958';
    expect(detectPii(text, OPTS)).toEqual([]);
    const region = loadConfig({ AGENTRY_PII_DEFAULT_REGION: 'gb' }).guardrails.piiDefaultRegion;
    expect(region).toBe('GB');
    expect(detectPii(text, { defaultRegion: region }).map((m) => [m.kind, m.value, m.canonical])).toEqual([['PHONE', '020 7946 0958', '+442079460958']]);
    expect(() => loadConfig({ AGENTRY_PII_DEFAULT_REGION: 'XX' })).toThrow(/AGENTRY_PII_DEFAULT_REGION/);
  });

  it('scans hostile inputs without pathological backtracking (a long run of near-matches finishes)', () => {
    const texts = [
      'a'.repeat(50_000) + '@',
      'x@' + 'b.'.repeat(20_000),
      '1 '.repeat(30_000),
      '1.'.repeat(30_000),
      ':'.repeat(30_000) + 'a',
      'GB82 '.repeat(10_000),
    ];
    for (const t of texts) expect(Array.isArray(detectPii(t, OPTS))).toBe(true);
  });
});
