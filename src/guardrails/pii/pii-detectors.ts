import { isIPv6 } from 'node:net';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { cardNetworkValid, ibanValid, luhnValid, ssnValid } from './checksums.js';

/**
 * The kinds of personal data the PII guard finds. Each detector is a pattern plus a validator (checksum, issuing
 * rules, address grammar); phone numbers come from libphonenumber-js, which knows every country's numbering plan.
 * Adding a kind is one entry in PII_DETECTORS: its name becomes the placeholder's prefix (<NAME_1>).
 */

export interface PiiMatch {
  kind: string;
  start: number;
  end: number;
  value: string;
  /** Same person, same value: the key that gives one placeholder to every spelling of one value. */
  canonical: string;
}

export interface PiiScanOptions {
  /** Region for phone numbers written without a country code (ISO 3166 alpha-2). */
  defaultRegion: string;
}

export interface PiiDetector {
  kind: string;
  find(text: string, opts: PiiScanOptions): PiiMatch[];
}

/** Runs `re` (global) over `text` and keeps what `accept` turns into a match. */
function scan(text: string, re: RegExp, accept: (m: RegExpExecArray) => PiiMatch | null): PiiMatch[] {
  const out: PiiMatch[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const hit = accept(m);
    if (hit) out.push(hit);
  }
  return out;
}

function at(kind: string, m: RegExpExecArray, canonical: string, value = m[0]): PiiMatch {
  return { kind, start: m.index, end: m.index + value.length, value, canonical };
}

// Every quantifier is bounded and the pieces cannot overlap, so a hostile text cannot make these backtrack.
const EMAIL = /(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w-])/g;
const CARD = /(?<![\d-])\d(?:[ -]?\d){11,18}(?![\d-])/g;
const SSN = /(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g;
// Nine digits in a row are an SSN only right after a word that says so: alone they are any number.
// `\s*(?:[:#]\s*)?`, not `\s*[:#]?\s*`: the two runs of spaces would share a long gap every way, O(n²) on "ssn" + spaces.
const SSN_BARE = /\b(?:ssn|social security(?: number| no\.?)?|ss#)\s*(?:[:#]\s*)?(\d{3})(\d{2})(\d{4})(?!\d)/gi;
const IBAN = /\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?\b/g;
const IPV4 = /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d)/g;
const IPV6 = /(?<![\w:.])(?=[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*:)[0-9A-Fa-f:.]{3,45}(?![\w:])/g;

/**
 * A run of the characters phone numbers are written with, as long as it goes; phoneRunEnd() then ends it at its last
 * digit not followed by a word character. Written as one regex ending in `\d(?!\w)`, a run with no such digit
 * ("((((...", digits glued to a word) was retried from each of its characters, each time to its end: O(n²).
 */
const PHONE_SPAN = /(?<![\w+])\+?[\d(][\d \t().\-/]*/g;
/** A phone number spans at most this many groups ("+33 1 42 68 53 00" has six) and characters. */
const PHONE_MAX_GROUPS = 7;
const PHONE_MAX_CHARS = 26;
/** Figures, not numbers to dial: amounts ("1,234.50"), decimals, dates. Skipped before libphonenumber. */
const NOT_A_PHONE = /^(?:\d{1,3}(?:[,.]\d{3})*[.,]\d{1,2}|\d+\.\d+|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})$/;
/**
 * libphonenumber calls per text. One call costs 0.1-0.25 ms, and a text of nothing but digit groups would take one
 * call per group; past the budget a candidate of phone length (7-15 digits) counts as a phone without the
 * numbering-plan check: more masking, never less.
 */
const PHONE_PARSE_BUDGET = 1000;

/**
 * Phone numbers: each run of digits and separators is read from each group on, longest candidate first, and a
 * candidate is a phone when libphonenumber finds it valid in its numbering plan (the region given for numbers
 * without a country code). Adjacent numbers in one run ("415 555 2671 212 555 0199") are found one by one.
 */
function findPhones(text: string, opts: PiiScanOptions): PiiMatch[] {
  const out: PiiMatch[] = [];
  const budget = { left: PHONE_PARSE_BUDGET };
  PHONE_SPAN.lastIndex = 0;
  for (let m = PHONE_SPAN.exec(text); m; m = PHONE_SPAN.exec(text)) {
    const end = phoneRunEnd(text, m.index, m.index + m[0].length);
    if (end >= 0) phonesInRun(text, new PhoneGroups(text, m.index, end), opts, budget, out);
  }
  return out;
}

function phonesInRun(text: string, g: PhoneGroups, opts: PiiScanOptions, budget: { left: number }, out: PiiMatch[]): void {
  while (g.fill() > 0) {
    let found = 0;
    for (let k = g.count; k >= 1 && !found; k--) {
      const start = g.starts[0]!;
      const end = g.ends[k - 1]!;
      if (end - start > PHONE_MAX_CHARS) continue;
      let digits = 0;
      for (let j = 0; j < k; j++) digits += g.digits[j]!;
      if (digits < 7 || digits > 15) continue;
      const value = text.slice(start, end);
      if (NOT_A_PHONE.test(value)) continue;
      let canonical: string | undefined;
      if (budget.left > 0) {
        budget.left--;
        const p = parsePhoneNumberFromString(value, opts.defaultRegion as CountryCode);
        if (p?.isValid()) canonical = p.number;
      } else if (digits >= 10) {
        canonical = value.replace(/\D/g, '');
      }
      if (canonical) {
        out.push({ kind: 'PHONE', start, end, value, canonical });
        found = k;
      }
    }
    g.drop(found || 1);
  }
}

/**
 * The space-separated groups of text[start, end), read as the scan needs them: only the next PHONE_MAX_GROUPS are
 * held (a run may be a whole megabyte of groups; collecting them all cost more than the scan).
 */
class PhoneGroups {
  readonly starts = new Int32Array(PHONE_MAX_GROUPS);
  readonly ends = new Int32Array(PHONE_MAX_GROUPS);
  readonly digits = new Int32Array(PHONE_MAX_GROUPS);
  /** How many groups are held. */
  count = 0;

  constructor(
    private readonly text: string,
    private pos: number,
    private readonly end: number,
  ) {}

  /** Reads groups until PHONE_MAX_GROUPS are held or the run ends; how many are held. */
  fill(): number {
    const { text, end } = this;
    while (this.count < PHONE_MAX_GROUPS) {
      let i = this.pos;
      while (i < end && isBlank(text.charCodeAt(i))) i++;
      if (i >= end) break;
      const start = i;
      let digits = 0;
      for (; i < end; i++) {
        const c = text.charCodeAt(i);
        if (isBlank(c)) break;
        if (isDigit(c)) digits++;
      }
      this.starts[this.count] = start;
      this.ends[this.count] = i;
      this.digits[this.count] = digits;
      this.count++;
      this.pos = i;
    }
    return this.count;
  }

  drop(n: number): void {
    for (let j = n; j < this.count; j++) {
      this.starts[j - n] = this.starts[j]!;
      this.ends[j - n] = this.ends[j]!;
      this.digits[j - n] = this.digits[j]!;
    }
    this.count -= n;
  }
}

/**
 * Where the span [start, end) of PHONE_SPAN ends as a phone run: after its last digit that no word character
 * follows; -1 when it has none. No later start inside the span can do better (its candidates are a subset), so
 * the scan goes on after the span.
 */
function phoneRunEnd(text: string, start: number, end: number): number {
  for (let i = end - 1; i >= start; i--) if (isDigit(text.charCodeAt(i)) && !WORD_CHAR.test(text[i + 1] ?? '')) return i + 1;
  return -1;
}

const WORD_CHAR = /\w/;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
/** The blanks PHONE_SPAN lets through: space and tab. */
const isBlank = (c: number): boolean => c === 32 || c === 9;

export const PII_DETECTORS: PiiDetector[] = [
  {
    kind: 'EMAIL',
    find: (text) => scan(text, EMAIL, (m) => at('EMAIL', m, m[0].toLowerCase())),
  },
  {
    kind: 'IBAN',
    find: (text) =>
      scan(text, IBAN, (m) => {
        const compact = m[0].replace(/ /g, '').toUpperCase();
        return ibanValid(compact) ? at('IBAN', m, compact) : null;
      }),
  },
  {
    kind: 'CREDIT_CARD',
    find: (text) =>
      scan(text, CARD, (m) => {
        // One kind of separator, used consistently ("4111 1111 1111 1111", "4111-1111-..."), or none.
        if (m[0].includes(' ') && m[0].includes('-')) return null;
        const digits = m[0].replace(/[ -]/g, '');
        return digits.length >= 12 && digits.length <= 19 && luhnValid(digits) && cardNetworkValid(digits) ? at('CREDIT_CARD', m, digits) : null;
      }),
  },
  {
    kind: 'US_SSN',
    find: (text) => [
      ...scan(text, SSN, (m) => (ssnValid(m[1]!, m[3]!, m[4]!) ? at('US_SSN', m, `${m[1]}${m[3]}${m[4]}`) : null)),
      ...scan(text, SSN_BARE, (m) => {
        if (!ssnValid(m[1]!, m[2]!, m[3]!)) return null;
        const digits = `${m[1]}${m[2]}${m[3]}`;
        return { kind: 'US_SSN', start: m.index + m[0].length - 9, end: m.index + m[0].length, value: digits, canonical: digits };
      }),
    ],
  },
  {
    kind: 'IP_ADDRESS',
    find: (text) => [
      ...scan(text, IPV4, (m) => at('IP_ADDRESS', m, m[0])),
      ...scan(text, IPV6, (m) => {
        // A trailing colon or dot belongs to the sentence, not the address.
        const value = m[0].replace(/[.:]+$/, (t) => (t === '::' ? t : ''));
        return isIPv6(value) ? at('IP_ADDRESS', m, value.toLowerCase(), value) : null;
      }),
    ],
  },
  {
    kind: 'PHONE',
    find: findPhones,
  },
];

/**
 * Every detection in `text`, left to right, without overlaps: where two overlap the one found by the earlier
 * detector in PII_DETECTORS wins (an IBAN's digits are not also a phone number), then the longer.
 *
 * The matches are taken in that order and each is kept unless it overlaps one kept before it. The kept ones are
 * disjoint, so among those starting before a candidate ends, the one starting last also ends last: one prefix-max
 * query (KeptSpans) decides, in O(log n). Checking every kept match instead made a text of nothing but digit groups
 * cost O(n²): 2 MB blocked the event loop for 10 s.
 */
export function detectPii(text: string, opts: PiiScanOptions, detectors: PiiDetector[] = PII_DETECTORS): PiiMatch[] {
  const all: { m: PiiMatch; rank: number }[] = [];
  detectors.forEach((d, rank) => {
    for (const m of d.find(text, opts)) all.push({ m, rank });
  });
  all.sort((a, b) => a.rank - b.rank || b.m.end - b.m.start - (a.m.end - a.m.start));
  const spans = new KeptSpans(all.map(({ m }) => m.start));
  const kept: PiiMatch[] = [];
  for (const { m } of all) {
    if (spans.endBefore(m.end) > m.start) continue;
    spans.keep(m.start, m.end);
    kept.push(m);
  }
  return kept.sort((a, b) => a.start - b.start);
}

/**
 * Disjoint spans, asked "what is the furthest end among the spans starting before `pos`": a Fenwick tree of
 * prefix maxima over the candidates' start positions (an end only ever grows at its start, which suits it).
 */
class KeptSpans {
  private readonly starts: number[];
  private readonly tree: Float64Array;

  constructor(candidateStarts: number[]) {
    this.starts = [...new Set(candidateStarts)].sort((a, b) => a - b);
    this.tree = new Float64Array(this.starts.length + 1).fill(-1);
  }

  keep(start: number, end: number): void {
    for (let i = this.rank(start) + 1; i < this.tree.length; i += i & -i) if (this.tree[i]! < end) this.tree[i] = end;
  }

  /** The largest end of a kept span whose start is < pos; -1 when there is none. */
  endBefore(pos: number): number {
    let best = -1;
    for (let i = this.rank(pos); i > 0; i -= i & -i) if (this.tree[i]! > best) best = this.tree[i]!;
    return best;
  }

  /** How many candidate starts are < pos. */
  private rank(pos: number): number {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
