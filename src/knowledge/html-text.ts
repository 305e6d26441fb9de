/**
 * Readable text of an HTML page, keeping the structure the chunker uses: headings become `#` lines, paragraphs and
 * list items are separated by blank lines, table rows become `| a | b |` lines. Scripts, styles, navigation
 * chrome and comments are dropped. A regular-expression pass is enough for that: nothing is executed or fetched.
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“' };

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

const inline = (s: string) => decodeEntities(s.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();

export function htmlToText(html: string): string {
  let s = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|noscript|template|svg|head|nav|footer)\b[\s\S]*?<\/\1\s*>/gi, '');
  const body = /<body\b[^>]*>([\s\S]*)<\/body>/i.exec(s);
  if (body) s = body[1]!;
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html);

  s = s.replace(/<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi, (_m, level: string, inner: string) => `\n\n${'#'.repeat(Number(level))} ${inline(inner)}\n\n`);
  s = s.replace(/<tr\b[^>]*>([\s\S]*?)<\/tr\s*>/gi, (_m, inner: string) => {
    const cells = [...inner.matchAll(/<t[hd]\b[^>]*>([\s\S]*?)<\/t[hd]\s*>/gi)].map((c) => inline(c[1]!).replace(/\|/g, '/'));
    return cells.length ? `\n| ${cells.join(' | ')} |\n` : '\n';
  });
  s = s.replace(/<(table|thead|tbody)\b[^>]*>|<\/(table|thead|tbody)\s*>/gi, '\n\n');
  s = s.replace(/<li\b[^>]*>/gi, '\n\n- ');
  s = s.replace(/<br\s*\/?>/gi, '\n');
  s = s.replace(/<\/?(p|div|section|article|main|header|ul|ol|dl|dt|dd|blockquote|pre|figure|figcaption|hr)\b[^>]*>/gi, '\n\n');
  s = s.replace(/<[^>]*>/g, ' ');
  s = decodeEntities(s);

  const lines = s.split('\n').map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim());
  const text = lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  // Table rows were emitted one per line with blank lines around the table: join adjacent rows back together.
  const joined = text.replace(/(\|[^\n]*\|)\n\n(?=\|)/g, '$1\n');
  const heading = title ? inline(title[1]!) : '';
  return heading && !joined.startsWith('#') ? `# ${heading}\n\n${joined}` : joined;
}
