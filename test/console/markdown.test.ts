import { describe, expect, it } from 'vitest';
// The console's modules are plain browser ES modules; the pure ones run in Node unchanged.
import { escapeHtml, renderInline, renderMarkdown, safeUrl } from '../../src/console/public/js/markdown.js';

/** Every tag the renderer may emit; anything else in the output means source text became markup. */
const ALLOWED_TAGS = new Set(['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'div', 'input']);
const ALLOWED_ATTRS = new Set(['href', 'rel', 'target', 'class', 'start', 'type', 'disabled', 'checked']);

function tagsOf(html: string): { tag: string; attrs: string[] }[] {
  return [...html.matchAll(/<\/?([a-zA-Z0-9]+)([^>]*)>/g)].map((m) => ({
    tag: m[1].toLowerCase(),
    attrs: [...m[2].matchAll(/([a-zA-Z-]+)(?:="[^"]*")?/g)].map((a) => a[1].toLowerCase()),
  }));
}

function expectOnlyOwnMarkup(html: string) {
  for (const { tag, attrs } of tagsOf(html)) {
    expect(ALLOWED_TAGS.has(tag), `unexpected <${tag}> in ${html}`).toBe(true);
    for (const a of attrs) expect(ALLOWED_ATTRS.has(a), `unexpected attribute ${a} in ${html}`).toBe(true);
  }
  for (const m of html.matchAll(/href="([^"]*)"/g)) expect(m[1]).toMatch(/^(https?:\/\/|mailto:|#|\/(?!\/)|\.\.?\/)/i);
}

describe('markdown renderer: safety', () => {
  const attacks = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '[click](javascript:alert(1))',
    '[click](JaVaScRiPt:alert`1`)',
    '[click](java\tscript:alert(1))',
    '[click](data:text/html;base64,PHNjcmlwdD4=)',
    '[click](vbscript:msgbox)',
    '![x](javascript:alert(1))',
    '<javascript:alert(1)>',
    '[x](https://ok.example/"onmouseover="alert(1))',
    '[x](//evil.example/path)',
    '`<b>code</b>` and **<i>bold</i>**',
    '```html\n<script>alert(1)</script>\n```',
    '```"><script>\nx\n```',
    '| <b>h</b> | x |\n|---|---|\n| <svg onload=alert(1)> | [a](javascript:x) |',
    '> <iframe src="https://evil.example"></iframe>',
    '- [x] <style>body{}</style>',
    'https://example.com/"><script>alert(1)</script>',
    '\u0000<script>\u0000',
    '&lt;script&gt; &amp; &#x3C;script&#x3E;',
  ];
  it.each(attacks)('keeps %j as text', (src) => {
    const html = renderMarkdown(src);
    expectOnlyOwnMarkup(html);
    expect(html).not.toMatch(/<(script|img|iframe|svg|style)/i);
  });

  it('escapes entities so they show literally', () => {
    expect(renderInline('&lt;b&gt; & "q"')).toBe('&amp;lt;b&amp;gt; &amp; &quot;q&quot;');
    expect(escapeHtml(`<a href="x">'`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;');
  });

  it('accepts only http(s), mailto and same-page link targets', () => {
    expect(safeUrl('https://a.example/x?y=1')).toBe('https://a.example/x?y=1');
    expect(safeUrl('mailto:a@b.example')).toBe('mailto:a@b.example');
    expect(safeUrl('#/tasks/1')).toBe('#/tasks/1');
    expect(safeUrl('/v1/files/1')).toBe('/v1/files/1');
    for (const bad of ['javascript:alert(1)', ' javascript:x', 'data:text/html,x', '//evil.example', 'java\nscript:x', 'ftp://x', 'file:///etc/passwd', ''])
      expect(safeUrl(bad), bad).toBeNull();
  });
});

describe('markdown renderer: formatting', () => {
  it('renders headings, emphasis, code and links', () => {
    expect(renderMarkdown('## Title *x*')).toBe('<h2>Title <em>x</em></h2>');
    expect(renderMarkdown('a **b** _c_ ~~d~~ `e*f*`')).toBe('<p>a <strong>b</strong> <em>c</em> <del>d</del> <code>e*f*</code></p>');
    expect(renderMarkdown('[docs](https://x.example/a?b=1&c=2)')).toBe(
      '<p><a href="https://x.example/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>',
    );
    expect(renderMarkdown('see https://x.example/p.')).toBe(
      '<p>see <a href="https://x.example/p" rel="noopener noreferrer nofollow" target="_blank">https://x.example/p</a>.</p>',
    );
  });

  it('leaves intra-word underscores alone', () => {
    expect(renderMarkdown('snake_case_name')).toBe('<p>snake_case_name</p>');
  });

  it('renders fenced code verbatim with its language class', () => {
    expect(renderMarkdown('```ts\nconst a = 1 < 2 && **x**;\n```')).toBe('<pre><code class="language-ts">const a = 1 &lt; 2 &amp;&amp; **x**;</code></pre>');
    expect(renderMarkdown('~~~\nunclosed')).toBe('<pre><code>unclosed</code></pre>');
  });

  it('renders tight and nested lists, ordered lists with a start, and task boxes', () => {
    expect(renderMarkdown('- a\n- b\n  - c\n- d')).toBe('<ul>\n<li>a</li>\n<li>b\n<ul>\n<li>c</li>\n</ul></li>\n<li>d</li>\n</ul>');
    expect(renderMarkdown('3. x\n4. y')).toBe('<ol start="3">\n<li>x</li>\n<li>y</li>\n</ol>');
    expect(renderMarkdown('- [x] done\n- [ ] todo')).toBe('<ul>\n<li><input type="checkbox" disabled checked> done</li>\n<li><input type="checkbox" disabled> todo</li>\n</ul>');
  });

  it('keeps a bulleted list and a following numbered list apart', () => {
    expect(renderMarkdown('- a\n\n1. b')).toBe('<ul>\n<li>a</li>\n</ul>\n<ol>\n<li>b</li>\n</ol>');
  });

  it('renders GFM tables with alignment classes and escaped pipes', () => {
    expect(renderMarkdown('| a | b |\n|:-:|--:|\n| 1 \\| 2 | `x|y` |')).toBe(
      '<div class="table-scroll"><table><thead><tr><th class="align-center">a</th><th class="align-right">b</th></tr></thead>' +
        '<tbody><tr><td class="align-center">1 | 2</td><td class="align-right"><code>x|y</code></td></tr></tbody></table></div>',
    );
  });

  it('renders quotes, rules and line breaks', () => {
    expect(renderMarkdown('> a\n> b')).toBe('<blockquote><p>a<br>b</p></blockquote>');
    expect(renderMarkdown('x\n\n---\n\ny')).toBe('<p>x</p>\n<hr>\n<p>y</p>');
  });

  it('bounds nesting: ten thousand quote levels render as at most a dozen nested quotes, then text', () => {
    const html = renderMarkdown(`${'> '.repeat(10_000)}deep`);
    expect(html.match(/<blockquote>/g)?.length).toBe(13);
    expect(html).toContain('deep');
    expect(renderMarkdown(Array.from({ length: 200 }, (_, k) => `${' '.repeat(k * 2)}- level ${k}`).join('\n')).match(/<ul>/g)?.length).toBeLessThanOrEqual(14);
  });

  it('renders empty and missing input as nothing', () => {
    expect(renderMarkdown('')).toBe('');
    expect(renderMarkdown(null)).toBe('');
  });
});
