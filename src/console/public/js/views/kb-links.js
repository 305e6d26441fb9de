import { api, path } from '../api.js';
import { h } from '../dom.js';

/**
 * An agent's knowledge bases as links named after each base: the agent's configuration holds ids only, so each
 * name is fetched (one request a base; agents hold a few). A base that is gone keeps its id and says so.
 */
export function kbLinks(kbs, signal) {
  return h(
    'ul',
    { class: 'plain' },
    kbs.map((k) => {
      const link = h('a', { href: `#${path`/knowledge/${k.id}`}` }, k.name ?? 'Knowledge base');
      const note = h('span', { class: 'muted' }, k.strategy ? ` (${k.strategy})` : '');
      if (!k.name) {
        api('GET', path`/v1/knowledge/${k.id}`, { signal })
          .then((kb) => (link.textContent = kb.name))
          .catch((e) => {
            if (e?.name === 'AbortError') return;
            link.textContent = k.id;
            note.textContent = ` (${e?.status === 404 ? 'deleted' : 'name unavailable'})`;
          });
      }
      return h('li', {}, link, note);
    }),
  );
}
