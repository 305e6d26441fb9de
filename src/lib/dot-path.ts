/**
 * Dot-notation paths used by webhooks' `params_mapping` and `getter` and by `duplication_prevention.selectors`: `message.chat.id`, `items.0.name` (numeric segments
 * index arrays; `items[0].name` is read the same way). Returns undefined when any segment is missing.
 */
export function readPath(root: unknown, path: string): unknown {
  const segments = path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((s) => s !== '');
  let cur: unknown = root;
  for (const seg of segments) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.prototype.hasOwnProperty.call(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      return undefined;
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}
