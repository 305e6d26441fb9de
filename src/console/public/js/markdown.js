/**
 * A small, safe Markdown renderer for task results. Every character of the source is HTML-escaped; the only
 * markup in the output is what this file emits, and links are limited to http(s), mailto and same-page targets.
 * Raw HTML in the source is shown as text, never interpreted. Images render as links (the console loads nothing
 * from other origins). Supported: headings, paragraphs, emphasis, strikethrough, inline and fenced code, links,
 * bare URLs, block quotes, nested lists, task-list boxes, GFM tables, rules. Pure: unit-tested in Node.
 */

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}
function unescapeHtml(s) {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (m) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" })[m]);
}

/** The href to emit, or null when the target is not safe to link to. */
export function safeUrl(raw) {
  const url = String(raw ?? '').trim();
  // Control characters and whitespace inside a URL are how scheme filters get bypassed ("java\tscript:").
  if (!url || /[\u0000-\u0020\u007f-\u009f]/.test(url)) return null;
  if (/^(https?:\/\/|mailto:)/i.test(url)) return url;
  if (/^(#|\/(?!\/)|\.\.?\/)/.test(url)) return url;
  return null;
}

function linkHtml(href, innerHtml) {
  const safe = safeUrl(href);
  if (!safe) return innerHtml;
  return `<a href="${escapeHtml(safe)}" rel="noopener noreferrer nofollow" target="_blank">${innerHtml}</a>`;
}

// ---- inline -------------------------------------------------------------------------------------------------

const PH = '\u0000';

/** Inline Markdown -> HTML. Protected pieces (code, escapes, links) become placeholders so later rules skip them. */
export function renderInline(text) {
  const slots = [];
  const keep = (html) => `${PH}${slots.push(html) - 1}${PH}`;
  let s = String(text).replace(/\u0000/g, '');

  s = s.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks, code) => keep(`<code>${escapeHtml(code.replace(/^ (?=.* $)|(?<=^ .*) $/g, ''))}</code>`));
  s = s.replace(/\\([\\`*_{}[\]()#+\-.!|~<>])/g, (_, ch) => keep(escapeHtml(ch)));
  s = s.replace(/<((?:https?:\/\/|mailto:)[^\s<>]+)>/gi, (_, url) => keep(linkHtml(url, escapeHtml(url))));
  s = escapeHtml(s);
  s = s.replace(/!\[([^\]]{0,500})\]\(([^()\s]{1,2000})(?:\s+&quot;[^]{0,500}?&quot;)?\)/g, (_, alt, url) =>
    keep(linkHtml(unescapeHtml(url), `${emphasis(alt) || 'image'}`)),
  );
  s = s.replace(/\[([^\]]{1,500})\]\(([^()\s]{1,2000})(?:\s+&quot;[^]{0,500}?&quot;)?\)/g, (_, label, url) => keep(linkHtml(unescapeHtml(url), emphasis(label))));
  s = s.replace(/\bhttps?:\/\/[^\s<>"'\u0000]+/gi, (m) => {
    // Sentence punctuation after a bare URL is not part of it.
    const url = m.replace(/(?:[.,;:!?)\]]|&#39;|&quot;|&gt;)+$/, '');
    return keep(linkHtml(unescapeHtml(url), url)) + m.slice(url.length);
  });
  s = emphasis(s);
  s = s.replace(/ {2,}\n|\\\n|\n/g, '<br>');
  while (s.includes(PH)) s = s.replace(new RegExp(`${PH}(\\d+)${PH}`, 'g'), (_, i) => slots[Number(i)]);
  return s;
}

/** Spans are bounded (1,000 characters) so that hostile input cannot make the patterns quadratic. */
function emphasis(s) {
  return s
    .replace(/\*\*(?=\S)([\s\S]{0,1000}?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]{0,1000}?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/\*(?=[^\s*])([^*]{0,1000}?[^\s*])\*/g, '<em>$1</em>')
    .replace(/\*(?=[^\s*])([^*])\*/g, '<em>$1</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([^_]{0,1000}?[^\s_]|[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]{0,1000}?\S)~~/g, '<del>$1</del>');
}

// ---- blocks -------------------------------------------------------------------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const TABLE_DELIM = /^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/** Markdown -> HTML (a fragment to place inside a container element). */
export function renderMarkdown(source) {
  const lines = String(source ?? '').replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  return renderBlocks(lines, 0).join('\n');
}

/** Quotes and lists nest by recursion; deeper than this the rest is shown as plain paragraph text. */
const MAX_DEPTH = 12;

function renderBlocks(lines, depth) {
  if (depth > MAX_DEPTH) return [`<p>${renderInline(lines.join('\n'))}</p>`];
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const lang = m[2];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(lines[i])) body.push(lines[i++]);
      i++;
      const cls = lang && /^[\w+#.-]{1,30}$/.test(lang) ? ` class="language-${escapeHtml(lang)}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const level = m[1].length;
      out.push(`<h${level}>${renderInline(m[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && lines[i].trim() && (m = QUOTE.exec(lines[i]) ?? [null, lines[i]])) {
        body.push(m[1]);
        i++;
      }
      out.push(`<blockquote>${renderBlocks(body, depth + 1).join('\n')}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = renderList(lines, i, out, depth);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = renderTable(lines, i, out);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++].trim());
    out.push(`<p>${renderInline(para.join('\n'))}</p>`);
  }
  return out;
}

function startsBlock(lines, i) {
  const l = lines[i];
  if (FENCE.test(l) || HEADING.test(l) || RULE.test(l) || QUOTE.test(l)) return true;
  if (LIST_ITEM.test(l) && LIST_ITEM.exec(l)[3]) return true;
  return l.includes('|') && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]) && lines[i + 1].includes('-');
}

function renderList(lines, start, out, depth) {
  const first = LIST_ITEM.exec(lines[start]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const startNum = ordered ? parseInt(first[2], 10) : 1;
  const items = [];
  let i = start;
  let loose = false;
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = indent + m[2].length + 1;
    const body = [m[3] ?? ''];
    i++;
    while (i < lines.length) {
      const l = lines[i];
      if (!l.trim()) {
        // A blank line continues the item only when indented content follows it.
        const next = lines[i + 1];
        if (next !== undefined && next.trim() && leading(next) >= contentIndent) {
          body.push('');
          loose = true;
          i++;
          continue;
        }
        if (next !== undefined && sameList(next, indent, ordered)) loose = true;
        break;
      }
      const sub = LIST_ITEM.exec(l);
      if (sub && sub[1].length <= indent) break;
      if (leading(l) >= Math.min(contentIndent, indent + 2)) body.push(l.slice(Math.min(leading(l), contentIndent)));
      else if (!startsBlock(lines, i)) body.push(l.trim());
      else break;
      i++;
    }
    items.push(body);
    while (i < lines.length && !lines[i].trim() && lines[i + 1] !== undefined && sameList(lines[i + 1], indent, ordered)) i++;
  }
  const tag = ordered ? 'ol' : 'ul';
  const startAttr = ordered && startNum !== 1 ? ` start="${startNum}"` : '';
  const lis = items.map((body) => {
    let checkbox = '';
    const task = /^\[([ xX])\]\s+/.exec(body[0]);
    if (task) {
      checkbox = `<input type="checkbox" disabled${task[1] === ' ' ? '' : ' checked'}> `;
      body[0] = body[0].slice(task[0].length);
    }
    const blocks = renderBlocks(body, depth + 1);
    // Tight lists: a lone paragraph is shown without its <p>.
    const html = !loose && blocks[0]?.startsWith('<p>') ? [blocks[0].slice(3, -4), ...blocks.slice(1)].join('\n') : blocks.join('\n');
    return `<li>${checkbox}${html}</li>`;
  });
  out.push(`<${tag}${startAttr}>\n${lis.join('\n')}\n</${tag}>`);
  return i;
}

function sameList(line, indent, ordered) {
  const m = LIST_ITEM.exec(line);
  return !!m && m[1].length === indent && /\d/.test(m[2]) === ordered;
}

function leading(line) {
  return line.length - line.trimStart().length;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  let inCode = false;
  for (let k = 0; k < s.length; k++) {
    const ch = s[k];
    if (ch === '\\' && s[k + 1] === '|') {
      cur += '|';
      k++;
    } else if (ch === '`') {
      inCode = !inCode;
      cur += ch;
    } else if (ch === '|' && !inCode) {
      cells.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  cells.push(cur.trim());
  return cells;
}

function renderTable(lines, start, out) {
  const head = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : ''));
  const cell = (tag, text, k) => `<${tag}${aligns[k] ? ` class="align-${aligns[k]}"` : ''}>${renderInline(text ?? '')}</${tag}>`;
  let i = start + 2;
  const rows = [];
  while (i < lines.length && lines[i].trim() && lines[i].includes('|')) {
    const cells = splitRow(lines[i]);
    rows.push(`<tr>${head.map((_, k) => cell('td', cells[k], k)).join('')}</tr>`);
    i++;
  }
  out.push(
    `<div class="table-scroll"><table><thead><tr>${head.map((t, k) => cell('th', t, k)).join('')}</tr></thead>` +
      `<tbody>${rows.join('')}</tbody></table></div>`,
  );
  return i;
}
