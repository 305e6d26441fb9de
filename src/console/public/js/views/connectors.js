import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, facts, loading, pager, timeEl } from '../components.js';
import { apiForm, createDisclosure, field, input, pageHead, panel, select, textarea, upload } from './workspace-ui.js';
import { connectionForm } from './connection-form.js';

/** Connectors: imported OpenAPI documents, their connections and operations. */
export async function renderConnectors(root, ctx) {
  ctx.setTitle('Connectors');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const list = h('div', {}, loading('Loading connectors…'));
  replaceChildren(
    root,
    pageHead('Connectors', { lead: 'OpenAPI documents whose operations agents can call through a connection.' }),
    panel('import-title', 'Import an OpenAPI document', importForm(ctx)),
    panel('connectors-title', 'Connectors', list),
  );
  const data = await api('GET', `/v1/connectors${query({ page, per_page: 20 })}`, { signal: ctx.signal });
  replaceChildren(
    list,
    dataTable({
      caption: 'Connectors',
      empty: 'No connector yet: import an OpenAPI 3 or Swagger 2 document above.',
      columns: [
        { label: 'Name', cell: (c) => h('a', { href: `#${path`/connectors/${c.id}`}` }, c.name) },
        { label: 'Operations', className: 'num', cell: (c) => String(c.total_operations) },
        { label: 'API version', cell: (c) => c.version || '—' },
        { label: 'Server', cell: (c) => (c.server_url ? h('span', { class: 'mono' }, c.server_url) : '—') },
        { label: 'Imported', cell: (c) => timeEl(c.created_at) },
      ],
      rows: data.items.map((c) => ({ key: c.id, value: c })),
    }),
    pager(data, (n) => ctx.navigate(`#/connectors${query({ page: n })}`), 'Connector pages'),
  );
}

/** The document comes from a file (multipart), a URL the server fetches, or pasted JSON/YAML text. */
function importForm(ctx) {
  const source = select([['file', 'A file'], ['url', 'A URL'], ['text', 'Pasted text']], 'file');
  const file = h('input', { type: 'file', accept: '.json,.yaml,.yml,application/json,application/yaml' });
  const url = input({ type: 'url', placeholder: 'https://example.com/openapi.json' });
  const text = textarea({ rows: 8, placeholder: '{"openapi": "3.0.3", ...}' });
  const fileField = field({ id: 'imp-file', label: 'Document file', control: file, name: 'openapi' });
  const urlField = field({ id: 'imp-url', label: 'Document URL', control: url, name: 'url', hint: 'Fetched by the server under its egress policy.' });
  const textField = field({ id: 'imp-text', label: 'Document (JSON or YAML)', control: text, name: 'openapi' });
  const show = () => {
    fileField.hidden = source.value !== 'file';
    urlField.hidden = source.value !== 'url';
    textField.hidden = source.value !== 'text';
  };
  source.addEventListener('change', show);
  show();
  const name = input({ required: true });
  const description = input();
  return apiForm({
    label: 'Import an OpenAPI document',
    submitLabel: 'Import',
    fields: [
      h('div', { class: 'ws-row' }, field({ id: 'imp-name', label: 'Name', control: name, name: 'name' }), field({ id: 'imp-description', label: 'Description', control: description, name: 'description' }), field({ id: 'imp-source', label: 'Source', control: source })),
      fileField,
      urlField,
      textField,
    ],
    send: async () => {
      if (source.value === 'file') {
        const fd = new FormData();
        fd.set('name', name.value);
        if (description.value) fd.set('description', description.value);
        if (file.files[0]) fd.set('file', file.files[0]);
        else fd.set('openapi', '');
        return upload('/v1/connectors', fd, { signal: ctx.signal });
      }
      const body = { name: name.value, ...(description.value && { description: description.value }) };
      if (source.value === 'url') return api('POST', '/v1/connectors/import_url', { body: { ...body, url: url.value }, signal: ctx.signal });
      return api('POST', '/v1/connectors', { body: { ...body, openapi: text.value }, signal: ctx.signal });
    },
    onDone: (c) => ctx.navigate(`#${path`/connectors/${c.id}`}`),
  });
}

/** One connector: facts, its connections (create, delete) and its operations (search, open). */
export async function renderConnector(root, ctx, id) {
  ctx.setTitle('Connector');
  root.append(loading('Loading connector…'));
  const connector = await api('GET', path`/v1/connectors/${id}`, { signal: ctx.signal });
  ctx.setTitle(connector.name);
  const connections = h('div', {}, loading('Loading connections…'));
  const operations = h('div', {}, loading('Loading operations…'));
  const search = input({ type: 'search', placeholder: 'Search by id, path, summary or tag' });
  const searchForm = h(
    'form',
    { role: 'search', 'aria-label': 'Operations search', class: 'ws-inline-form', onsubmit: (e) => (e.preventDefault(), loadOperations()) },
    field({ id: 'op-search', label: 'Search operations', control: search }),
    h('button', { type: 'submit', class: 'button secondary' }, 'Search'),
  );
  let conns = [];
  replaceChildren(
    root,
    pageHead(connector.name, { lead: connector.description || null }),
    h('p', {}, h('a', { href: '#/connectors' }, '← All connectors')),
    h(
      'div',
      { class: 'grid-2' },
      panel(
        'connector-facts',
        'Document',
        facts([
          ['Id', h('span', { class: 'mono' }, connector.id)],
          ['API version', connector.version],
          ['Document format', connector.openapi_version],
          ['Server', connector.server_url],
          ['Operations', String(connector.total_operations)],
          ['Imported', timeEl(connector.created_at)],
        ]),
      ),
      panel('connections-title', 'Connections', connections, createDisclosure('New connection', connectionForm(ctx, connector, () => loadConnections()), { open: false })),
    ),
    panel('operations-title', 'Operations', searchForm, operations),
  );
  await Promise.all([loadConnections(), loadOperations()]);

  async function loadConnections() {
    try {
      conns = (await api('GET', `${path`/v1/connectors/${id}/connections`}${query({ per_page: 50 })}`, { signal: ctx.signal })).items;
      replaceChildren(
        connections,
        dataTable({
          caption: 'Connections',
          empty: 'No connection yet: an operation runs through a connection (base URL and credentials).',
          columns: [
            { label: 'Name', cell: (c) => c.name },
            { label: 'Base URL', cell: (c) => h('span', { class: 'mono' }, c.base_url ?? connector.server_url ?? '—') },
            { label: 'Credentials', cell: (c) => (c.security ? h('span', { class: 'badge' }, c.security.type) : 'none') },
            { label: 'Created', cell: (c) => timeEl(c.created_at) },
          ],
          rows: conns.map((c) => ({ key: c.id, value: c })),
        }),
      );
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(connections, errorAlert(e));
    }
  }

  async function loadOperations() {
    try {
      const ops = await api('GET', `${path`/v1/tools/connectors/${id}/operations`}${query({ query: search.value.trim() })}`, { signal: ctx.signal });
      replaceChildren(
        operations,
        h('p', { class: 'muted', role: 'status' }, `${ops.length} operation${ops.length === 1 ? '' : 's'}`),
        dataTable({
          caption: 'Operations',
          empty: 'No operation matches.',
          columns: [
            { label: 'Method', cell: (o) => h('span', { class: `badge method method-${o.method.toLowerCase()}` }, o.method.toUpperCase()) },
            { label: 'Path', cell: (o) => h('a', { href: `#${path`/connectors/${id}/operations/${o.id}`}`, class: 'mono' }, o.path) },
            { label: 'Operation', cell: (o) => h('div', { class: 'task-cell' }, h('span', { class: 'mono' }, o.operationId), o.summary ? h('span', { class: 'task-input' }, o.summary) : null) },
            { label: 'Tags', cell: (o) => o.tags.join(', ') },
          ],
          rows: ops.map((o) => ({ key: o.id, value: o })),
        }),
      );
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(operations, errorAlert(e));
    }
  }
}
