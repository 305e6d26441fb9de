/**
 * Splits a document's text into chunks that follow its structure, so a chunk answers one thing:
 *
 * - headings (markdown `#`..`######`) start a new section and are never inside a chunk's body; each chunk carries
 *   the heading path of its section ("Article I > Section 3") for ranking and for the reader;
 * - paragraphs (blank-line separated) are packed whole into a chunk up to `maxChars`;
 * - table rows (markdown `| a | b |` or CSV lines) are packed whole, each chunk repeating the table's header row so
 *   a row is never read without its column names;
 * - a block longer than `maxChars` is cut at sentence (else word) boundaries into windows of at most `maxChars`,
 *   consecutive windows sharing up to `overlapChars` so a fact on a cut is whole in one of them.
 */

export interface Chunk {
  heading: string;
  content: string;
}

export interface ChunkOptions {
  maxChars: number;
  overlapChars: number;
  /** The text is one table (CSV, spreadsheet export): every line is a row, the first is the header. */
  table?: boolean;
}

export const DEFAULT_CHUNKING: ChunkOptions = { maxChars: 1000, overlapChars: 150 };

type Block = { kind: 'heading'; level: number; text: string } | { kind: 'para'; text: string } | { kind: 'table'; header: string[]; rows: string[] };

const HEADING_RE = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const TABLE_LINE_RE = /^\s*\|.*\|\s*$/;
const TABLE_RULE_RE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
/** Spreadsheet exports name each sheet on its own line ("Sheet: Prices"); it heads that sheet's rows. */
const SHEET_RE = /^Sheet: (.+)$/;

export function chunkText(text: string, opts: ChunkOptions = DEFAULT_CHUNKING): Chunk[] {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/\u0000/g, '');
  const blocks = opts.table ? tableBlocks(normalized) : parseBlocks(normalized);
  const out: Chunk[] = [];
  const path: { level: number; text: string }[] = [];
  let pending: string[] = [];
  let pendingLen = 0;

  const heading = () => path.map((p) => p.text).join(' > ');
  const flush = () => {
    if (pending.length) out.push({ heading: heading(), content: pending.join('\n\n') });
    pending = [];
    pendingLen = 0;
  };
  const add = (piece: string) => {
    if (pendingLen && pendingLen + 2 + piece.length > opts.maxChars) flush();
    pending.push(piece);
    pendingLen += (pendingLen ? 2 : 0) + piece.length;
  };

  for (const b of blocks) {
    if (b.kind === 'heading') {
      flush();
      while (path.length && path[path.length - 1]!.level >= b.level) path.pop();
      path.push({ level: b.level, text: b.text });
      continue;
    }
    if (b.kind === 'table') {
      flush();
      for (const c of packRows(b.header, b.rows, opts.maxChars)) out.push({ heading: heading(), content: c });
      continue;
    }
    if (b.text.length > opts.maxChars) {
      flush();
      for (const w of windows(b.text, opts.maxChars, opts.overlapChars)) out.push({ heading: heading(), content: w });
      continue;
    }
    add(b.text);
  }
  flush();
  return out.filter((c) => c.content.trim().length > 0);
}

function parseBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  let para: string[] = [];
  const endPara = () => {
    const t = para.join('\n').trim();
    if (t) blocks.push({ kind: 'para', text: t });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const h = HEADING_RE.exec(line);
    if (h) {
      endPara();
      blocks.push({ kind: 'heading', level: h[1]!.length, text: h[2]!.trim() });
      continue;
    }
    const sheet = SHEET_RE.exec(line);
    if (sheet) {
      endPara();
      blocks.push({ kind: 'heading', level: 1, text: sheet[1]!.trim() });
      // The sheet's CSV rows follow up to the next blank line.
      const rows: string[] = [];
      while (i + 1 < lines.length && lines[i + 1]!.trim() !== '') rows.push(lines[++i]!);
      if (rows.length) blocks.push({ kind: 'table', header: [rows[0]!], rows: rows.slice(1) });
      continue;
    }
    if (TABLE_LINE_RE.test(line)) {
      endPara();
      const rows: string[] = [line];
      while (i + 1 < lines.length && TABLE_LINE_RE.test(lines[i + 1]!)) rows.push(lines[++i]!);
      const hasRule = rows.length > 1 && TABLE_RULE_RE.test(rows[1]!);
      blocks.push(hasRule ? { kind: 'table', header: rows.slice(0, 2), rows: rows.slice(2) } : { kind: 'table', header: [], rows });
      continue;
    }
    if (line.trim() === '') {
      endPara();
      continue;
    }
    para.push(line);
  }
  endPara();
  return blocks;
}

function tableBlocks(text: string): Block[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (!lines.length) return [];
  return [{ kind: 'table', header: [lines[0]!], rows: lines.slice(1) }];
}

/** Rows packed whole under their header; a single row longer than the limit is cut like a paragraph. */
function packRows(header: string[], rows: string[], maxChars: number): string[] {
  const head = header.join('\n');
  if (!rows.length) return head ? [head] : [];
  const out: string[] = [];
  let cur: string[] = [];
  let len = head.length;
  const flush = () => {
    if (cur.length) out.push([head, ...cur].filter(Boolean).join('\n'));
    cur = [];
    len = head.length;
  };
  for (const row of rows) {
    if (head.length + 1 + row.length > maxChars) {
      flush();
      for (const w of windows(row, Math.max(200, maxChars - head.length - 1), 0)) out.push([head, w].filter(Boolean).join('\n'));
      continue;
    }
    if (cur.length && len + 1 + row.length > maxChars) flush();
    cur.push(row);
    len += 1 + row.length;
  }
  flush();
  return out;
}

/** Sentence-aligned windows of at most maxChars; each starts with up to overlapChars of the previous one's end. */
export function windows(text: string, maxChars: number, overlapChars: number): string[] {
  const units = splitUnits(text, maxChars);
  const out: string[] = [];
  let cur: string[] = [];
  let len = 0;
  for (const u of units) {
    if (cur.length && len + 1 + u.length > maxChars) {
      out.push(cur.join(' '));
      // Carry whole trailing sentences that fit in the overlap budget (and leave room for the next unit).
      const carry: string[] = [];
      let carryLen = 0;
      for (let i = cur.length - 1; i >= 0; i--) {
        const s = cur[i]!;
        if (carryLen + s.length + 1 > overlapChars || carryLen + s.length + 1 + u.length > maxChars) break;
        carry.unshift(s);
        carryLen += s.length + 1;
      }
      cur = carry;
      len = carryLen;
    }
    cur.push(u);
    len += (len ? 1 : 0) + u.length;
  }
  if (cur.length) out.push(cur.join(' '));
  return out;
}

/** Sentences; a sentence longer than the limit becomes word runs; a word longer than the limit is cut. */
function splitUnits(text: string, maxChars: number): string[] {
  const sentences = text.replace(/\s+/g, ' ').trim().match(/[^.!?;]+(?:[.!?;]+["')\]]*|$)\s*/g) ?? [text];
  const units: string[] = [];
  for (const raw of sentences) {
    const s = raw.trim();
    if (!s) continue;
    if (s.length <= maxChars) {
      units.push(s);
      continue;
    }
    let cur = '';
    for (const word of s.split(' ')) {
      for (let w = word; w.length; w = w.slice(maxChars)) {
        const piece = w.slice(0, maxChars);
        if (cur && cur.length + 1 + piece.length > maxChars) {
          units.push(cur);
          cur = '';
        }
        cur = cur ? `${cur} ${piece}` : piece;
      }
    }
    if (cur) units.push(cur);
  }
  return units;
}
