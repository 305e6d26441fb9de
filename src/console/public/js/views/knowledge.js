import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, loading, pager, timeEl } from '../components.js';
import { apiForm, createDisclosure, field, input, pageHead, panel, textarea } from './workspace-ui.js';

/** Knowledge bases: a list and a create form; each base has its own page (documents, upload, search). */
export async function renderKnowledgeBases(root, ctx) {
  ctx.setTitle('Knowledge bases');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const list = h('div', {}, loading('Loading knowledge bases…'));
  const name = input();
  const description = textarea({ rows: 2 });
  const form = apiForm({
    label: 'New knowledge base',
    submitLabel: 'Create knowledge base',
    fields: [field({ id: 'kb-name', label: 'Name', control: name, name: 'name' }), field({ id: 'kb-description', label: 'Description', control: description, name: 'description' })],
    send: () => api('POST', '/v1/knowledge', { body: { name: name.value, description: description.value || null }, signal: ctx.signal }),
    onDone: (kb) => ctx.navigate(`#${path`/knowledge/${kb.id}`}`),
  });
  replaceChildren(
    root,
    pageHead('Knowledge bases', { lead: 'Documents agents search while they run: upload files or add URLs, then try a search.' }),
    panel('kbs-title', 'Knowledge bases', list, createDisclosure('New knowledge base', form)),
  );
  const data = await api('GET', `/v1/knowledge${query({ page, per_page: 20 })}`, { signal: ctx.signal });
  replaceChildren(
    list,
    dataTable({
      caption: 'Knowledge bases',
      empty: 'No knowledge base yet.',
      columns: [
        { label: 'Name', cell: (k) => h('a', { href: `#${path`/knowledge/${k.id}`}` }, k.name) },
        { label: 'Description', cell: (k) => k.description || '—' },
        { label: 'Ready documents', className: 'num', cell: (k) => String(k.total_documents) },
        { label: 'Created', cell: (k) => timeEl(k.created_at) },
      ],
      rows: data.items.map((k) => ({ key: k.id, value: k })),
    }),
    pager(data, (n) => ctx.navigate(`#/knowledge${query({ page: n })}`), 'Knowledge base pages'),
  );
}
