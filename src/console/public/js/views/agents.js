import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, loading, pager, statusBadge, timeEl } from '../components.js';

/** The organization's agents, paged. */
export async function renderAgents(root, ctx) {
  ctx.setTitle('Agents');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const body = h('section', { class: 'panel', 'aria-label': 'Agent list' }, loading('Loading agents…'));
  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Agents'), h('div', { class: 'actions' }, h('a', { href: '#/agents/new', class: 'button primary' }, 'New agent'))), body);
  let data;
  try {
    data = await api('GET', `/v1/agents${query({ page, per_page: 20 })}`, { signal: ctx.signal });
  } catch (e) {
    if (ctx.signal.aborted) return;
    replaceChildren(body, errorAlert(e));
    return;
  }
  replaceChildren(body, 
    dataTable({
      caption: 'Agents',
      empty: 'No agents yet. Create one with “New agent” or POST /v1/agents.',
      columns: [
        { label: 'Name', cell: (a) => h('a', { href: `#${path`/agents/${a.id}`}` }, h('span', { 'aria-hidden': 'true', class: 'icon' }, a.icon ?? ''), ' ', a.name) },
        { label: 'Status', cell: (a) => statusBadge(a.status) },
        { label: 'Type', cell: (a) => a.type ?? '—' },
        { label: 'Model', cell: (a) => [a.model_provider, a.model_name].filter(Boolean).join(' / ') || '—' },
        { label: 'Changes', cell: (a) => (a.has_pending_changes ? h('span', { class: 'badge pending-changes' }, 'Draft pending') : h('span', { class: 'muted' }, 'Published')) },
        { label: 'Created', cell: (a) => timeEl(a.created_at) },
      ],
      rows: data.items.map((a) => ({ key: a.id, value: a })),
    }),
    pager(data, (p) => ctx.navigate(`#/agents${query({ page: p })}`), 'Agents pages'),
  );
}
