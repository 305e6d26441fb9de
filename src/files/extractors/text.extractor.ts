import { decodeText } from '../file-kinds.js';
import type { Extractor } from './extractor.js';

export const txtExtractor: Extractor = async (bytes) => (decodeText(bytes) ?? '').replace(/\r\n?/g, '\n');

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/**
 * The human-readable text of an SVG: the text nodes of <text>, <tspan>, <textPath>, <title> and <desc>.
 * Styles, scripts and path data are not text a reader sees. No XML parser is needed for that, and none that
 * could be made to fetch entities is involved.
 */
export const svgExtractor: Extractor = async (bytes) => {
  const source = (decodeText(bytes) ?? '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(style|script)\b[\s\S]*?<\/\1\s*>/gi, '');
  const out: string[] = [];
  const re = /<(text|title|desc)\b[^>]*>([\s\S]*?)<\/\1\s*>/gi;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    const inner = m[2]!.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1').replace(/<[^>]+>/g, ' ');
    const text = decodeEntities(inner).replace(/\s+/g, ' ').trim();
    if (text) out.push(text);
  }
  return out.join('\n');
};
