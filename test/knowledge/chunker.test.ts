import { describe, expect, it } from 'vitest';
import { chunkText, windows } from '../../src/knowledge/chunker.js';
import { htmlToText } from '../../src/knowledge/html-text.js';
import { fuse, queryTerms } from '../../src/knowledge/ranking.js';

const opts = { maxChars: 200, overlapChars: 60 };

describe('chunkText', () => {
  it('starts a chunk at every heading and carries the heading path', () => {
    const text = '# Guide\n\nIntro.\n\n## Setup\n\nInstall it.\n\n### Linux\n\nUse apt.\n\n## Usage\n\nRun it.';
    expect(chunkText(text, opts)).toEqual([
      { heading: 'Guide', content: 'Intro.' },
      { heading: 'Guide > Setup', content: 'Install it.' },
      { heading: 'Guide > Setup > Linux', content: 'Use apt.' },
      { heading: 'Guide > Usage', content: 'Run it.' },
    ]);
  });

  it('packs whole paragraphs up to the size limit and never splits one that fits', () => {
    const p = (n: number) => `Paragraph ${n} ${'x'.repeat(70)}.`;
    const chunks = chunkText([1, 2, 3, 4].map(p).join('\n\n'), opts);
    expect(chunks.map((c) => c.content)).toEqual([`${p(1)}\n\n${p(2)}`, `${p(3)}\n\n${p(4)}`]);
    expect(chunks.every((c) => c.content.length <= opts.maxChars)).toBe(true);
  });

  it('cuts an oversized paragraph at sentences, with overlap, within the limit', () => {
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} says something.`);
    const chunks = chunkText(sentences.join(' '), opts);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.content.length).toBeLessThanOrEqual(opts.maxChars);
    for (const s of sentences) expect(chunks.some((c) => c.content.includes(s))).toBe(true);
    // Consecutive windows share the sentence on the cut.
    const lastOfFirst = chunks[0]!.content.split('. ').pop()!;
    expect(chunks[1]!.content.startsWith(lastOfFirst.replace(/\.$/, ''))).toBe(true);
  });

  it('cuts text without sentence ends (and words longer than the limit) without losing a character', () => {
    const long = 'w'.repeat(450);
    const out = windows(long, 200, 0);
    expect(out.map((w) => w.length)).toEqual([200, 200, 50]);
    expect(out.join('')).toBe(long);
  });

  it('keeps table rows whole and repeats the header row in every chunk', () => {
    const rows = Array.from({ length: 8 }, (_, i) => `| row ${i} | ${'v'.repeat(30)} |`);
    const text = `# Prices\n\n| item | value |\n| --- | --- |\n${rows.join('\n')}\n\nAfter the table.`;
    const chunks = chunkText(text, opts);
    const tables = chunks.filter((c) => c.content.includes('| row'));
    expect(tables.length).toBeGreaterThan(1);
    for (const c of tables) {
      expect(c.heading).toBe('Prices');
      expect(c.content.startsWith('| item | value |\n| --- | --- |\n')).toBe(true);
      expect(c.content.length).toBeLessThanOrEqual(opts.maxChars);
    }
    expect(tables.flatMap((c) => c.content.split('\n').filter((l) => l.startsWith('| row')))).toEqual(rows);
    expect(chunks[chunks.length - 1]).toEqual({ heading: 'Prices', content: 'After the table.' });
  });

  it('treats CSV as one table and spreadsheet exports as one table per sheet', () => {
    const csv = chunkText('a,b\n1,2\n3,4', { ...opts, table: true });
    expect(csv).toEqual([{ heading: '', content: 'a,b\n1,2\n3,4' }]);
    const book = chunkText('Sheet: Q1\nname,total\nx,1\n\nSheet: Q2\nname,total\ny,2', opts);
    expect(book).toEqual([
      { heading: 'Q1', content: 'name,total\nx,1' },
      { heading: 'Q2', content: 'name,total\ny,2' },
    ]);
  });
});

describe('htmlToText', () => {
  it('keeps headings, paragraphs, list items and table rows; drops scripts, styles and navigation', () => {
    const html = `<html><head><title>T</title><style>.a{}</style></head><body><nav>menu</nav><h1>Title</h1>
      <p>First &amp; <b>bold</b> para.</p><ul><li>one</li><li>two</li></ul><script>alert(1)</script>
      <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table><!-- hidden --></body></html>`;
    expect(htmlToText(html)).toBe('# Title\n\nFirst & bold para.\n\n- one\n\n- two\n\n| k | v |\n| a | 1 |');
  });
});

describe('ranking', () => {
  it('reduces a question to its meaningful words, safe for FTS5 and tsquery syntax', () => {
    expect(queryTerms('How old must someone be to serve as a "senator" OR NOT (x)?')).toEqual(['old', 'someone', 'serve', 'senator']);
    expect(queryTerms('the and of')).toEqual(['the', 'and', 'of']);
  });

  it('fuses ranked lists by reciprocal rank, scoring 1 for first place in every list', () => {
    expect(fuse([[{ seq: 1 }, { seq: 2 }], [{ seq: 1 }, { seq: 3 }]], 3)).toEqual([
      { seq: 1, score: 1 },
      // 61/62 from one list of two: second place in one list only.
      { seq: 2, score: 0.491935 },
      { seq: 3, score: 0.491935 },
    ]);
    expect(fuse([[], [{ seq: 9 }]], 5)).toEqual([{ seq: 9, score: 1 }]);
  });
});
