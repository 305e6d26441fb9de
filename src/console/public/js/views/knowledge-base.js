import { api, path, query } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, facts, liveUpdate, loading, pager, poll, statusBadge, timeEl } from '../components.js';
import { apiForm, field, input, pageHead, panel, select, textarea, upload } from './workspace-ui.js';

const POLL_MS = 2000;
const PER_PAGE = 20;

/** One knowledge base: its documents with their indexing status (kept fresh), upload, add by URL, and search. */
export async function renderKnowledgeBase(root, ctx, kbId) {
  ctx.setTitle('Knowledge base');
  root.append(loading('Loading knowledge base…'));
  const kb = await api('GET', path`/v1/knowledge/${kbId}`, { signal: ctx.signal });
  ctx.setTitle(kb.name);
  let docPage = 1;
  const names = new Map();
  const docs = h('div', {}, loading('Loading documents…'));
  const docsPager = h('div', {});
  const results = h('div', { class: 'search-results' });

  replaceChildren(
    root,
    pageHead(kb.name, { lead: kb.description }),
    h('p', {}, h('a', { href: '#/knowledge' }, '← All knowledge bases')),
    h(
      'div',
      { class: 'grid-2' },
      panel(
        'kb-facts',
        'Details',
        facts([
          ['Id', h('span', { class: 'mono' }, kb.id)],
          ['Type', kb.type],
          ['Agent', kb.agent_id ? h('a', { href: `#${path`/agents/${kb.agent_id}`}` }, 'Owning agent') : null],
          ['Created', timeEl(kb.created_at)],
        ]),
      ),
      panel('add-title', 'Add documents', addForm()),
    ),
    panel('search-title', 'Search', searchForm(), results),
    panel('docs-title', 'Documents', docs, docsPager),
  );
  await refresh().catch(() => {});
  poll(refresh, POLL_MS, ctx.signal);

  async function refresh() {
    try {
      const data = await api('GET', `${path`/v1/knowledge/${kbId}/documents`}${query({ page: docPage, per_page: PER_PAGE })}`, { signal: ctx.signal });
      for (const d of data.items) names.set(d.id, d.name);
      liveUpdate(docs, data.items, () => documentsTable(data.items));
      liveUpdate(docsPager, [data.page, data.total, data.total_pages], () =>
        pager(data, (n) => {
          docPage = n;
          void refresh();
        }, 'Document pages'),
      );
    } catch (e) {
      if (ctx.signal.aborted) return;
      delete docs.dataset.rendered;
      replaceChildren(docs, errorAlert(e));
      throw e;
    }
  }

  function documentsTable(items) {
    return dataTable({
      caption: `Documents of ${kb.name}`,
      empty: 'No document yet: upload files or add URLs.',
      columns: [
        { label: 'Name', cell: (d) => (d.document_url ? h('a', { href: d.document_url, rel: 'noreferrer', target: '_blank' }, d.name) : d.name) },
        { label: 'Status', cell: (d) => [statusBadge(d.status), d.status_reason ? h('div', { class: 'hint' }, d.status_reason) : null] },
        { label: 'Source', cell: (d) => d.source },
        { label: 'Chunks', className: 'num', cell: (d) => String(d.chunks_count) },
        { label: 'Indexed', cell: (d) => timeEl(d.indexed_at) },
        { label: '', cell: (d) => h('button', { type: 'button', class: 'button small danger-outline', 'aria-label': `Delete ${d.name}`, onclick: () => removeDocument(d) }, 'Delete') },
      ],
      rows: items.map((d) => ({ key: d.id, value: d })),
    });
  }

  async function removeDocument(d) {
    if (!(await confirmAction({ title: 'Delete document', text: `Delete “${d.name}” and its passages?`, confirmLabel: 'Delete' }))) return;
    try {
      await api('DELETE', path`/v1/knowledge/${kbId}/documents/${d.id}`, { signal: ctx.signal });
      announce(`${d.name} deleted`);
      await refresh();
    } catch (e) {
      replaceChildren(results, errorAlert(e));
    }
  }

  function addForm() {
    const mode = select([['files', 'Upload files'], ['urls', 'Fetch URLs']], 'files');
    const files = h('input', { type: 'file', multiple: true });
    const urls = textarea({ rows: 3, placeholder: 'https://example.com/handbook.pdf' });
    const filesField = field({ id: 'kb-files', label: 'Files', control: files, name: 'files', hint: 'PDF, Word, text, Markdown, HTML, CSV, spreadsheets, images (OCR), ZIP.' });
    const urlsField = field({ id: 'kb-urls', label: 'URLs, one a line', control: urls, name: 'document_urls' });
    const show = () => {
      filesField.hidden = mode.value !== 'files';
      urlsField.hidden = mode.value !== 'urls';
    };
    mode.addEventListener('change', show);
    show();
    return apiForm({
      label: 'Add documents',
      submitLabel: 'Add',
      fields: [field({ id: 'kb-mode', label: 'How', control: mode }), filesField, urlsField],
      send: () => {
        if (mode.value === 'urls') {
          const list = urls.value.split(/\s+/).filter(Boolean);
          return api('POST', path`/v1/knowledge/${kbId}/documents`, { body: { document_urls: list }, signal: ctx.signal });
        }
        const fd = new FormData();
        for (const f of files.files) fd.append('files', f);
        return upload(path`/v1/knowledge/${kbId}/documents`, fd, { signal: ctx.signal });
      },
      onDone: async (added, form) => {
        form.reset();
        show();
        const n = Array.isArray(added) ? added.length : (added?.items?.length ?? 1);
        announce(`${n} document${n === 1 ? '' : 's'} added; indexing`);
        await refresh();
      },
    });
  }

  function searchForm() {
    const q = input({ type: 'search', placeholder: 'What should the agent find?' });
    const topK = select(['5', '10', '20'].map((n) => [n, `${n} passages`]), '5');
    return apiForm({
      label: 'Search the knowledge base',
      submitLabel: 'Search',
      fields: [h('div', { class: 'ws-row' }, field({ id: 'kb-q', label: 'Search text', control: q, name: 'search_query' }), field({ id: 'kb-topk', label: 'Show', control: topK, name: 'top_k' }))],
      send: () => api('GET', `${path`/v1/knowledge/${kbId}/search`}${query({ search_query: q.value, top_k: topK.value })}`, { signal: ctx.signal }),
      onDone: (hits) => {
        replaceChildren(results, passages(hits));
        announce(`${hits.length} passage${hits.length === 1 ? '' : 's'} found`);
      },
    });
  }

  /** Ranked passages: rank, score, the document they come from, and the text. */
  function passages(hits) {
    if (!hits.length) return h('p', { class: 'empty', role: 'status' }, 'No passage matches.');
    return h(
      'ol',
      { class: 'passages', 'aria-label': 'Ranked passages' },
      hits.map((hit, i) =>
        h(
          'li',
          { class: 'passage' },
          h('div', { class: 'passage-head' }, h('span', { class: 'passage-rank' }, `#${i + 1}`), h('span', {}, `score ${hit.score.toFixed(3)}`), h('span', {}, names.get(hit.document_id) ?? hit.document_id)),
          h('p', { class: 'passage-text' }, hit.content),
        ),
      ),
    );
  }
}
