import { api, path, query } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, loading, pager, timeEl } from '../components.js';

/**
 * An agent's memories (docs/memory.md): what it remembers about its users and for everyone, newest first, with
 * the task each came from and a delete button (a deleted memory is no longer recalled).
 */
export async function renderMemories(section, ctx, agent, page = 1) {
  const body = h('div', {}, loading('Loading memories…'));
  replaceChildren(section, section.firstChild, body);
  let data;
  try {
    data = await api('GET', `${path`/v1/agents/${agent.id}/memories`}${query({ page, per_page: 10 })}`, { signal: ctx.signal });
  } catch (e) {
    if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
    return;
  }
  const remove = (m) => async () => {
    const ok = await confirmAction({ title: 'Delete this memory?', text: m.content, confirmLabel: 'Delete memory' });
    if (!ok) return;
    try {
      await api('DELETE', path`/v1/agents/${agent.id}/memories/${m.id}`, { signal: ctx.signal });
      announce('Memory deleted');
      await renderMemories(section, ctx, agent, page);
    } catch (e) {
      if (!ctx.signal.aborted) body.prepend(errorAlert(e));
    }
  };
  replaceChildren(
    body,
    dataTable({
      caption: `Memories of ${agent.name}`,
      empty: 'No memories yet.',
      columns: [
        { label: 'Memory', cell: (m) => m.content },
        { label: 'About', cell: (m) => (m.user_id === null ? h('span', { class: 'badge' }, 'every user') : h('span', { class: 'mono' }, m.user_id)) },
        { label: 'Source', cell: (m) => (m.task_id ? h('a', { href: `#/tasks/${encodeURIComponent(m.task_id)}` }, m.source) : m.source) },
        { label: 'Updated', cell: (m) => timeEl(m.updated_at) },
        { label: 'Actions', cell: (m) => h('button', { type: 'button', class: 'button danger-outline small', onclick: remove(m) }, 'Delete') },
      ],
      rows: data.items.map((m) => ({ key: m.id, value: m })),
    }),
    pager(data, (p) => renderMemories(section, ctx, agent, p), 'Memories pages'),
  );
}
