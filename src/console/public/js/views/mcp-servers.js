import { api, path, query } from '../api.js';
import { confirmAction, h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, facts, jsonDetails, loading, pager, timeEl } from '../components.js';
import { apiForm, createDisclosure, field, input, jsonValue, pageHead, panel, select, textarea } from './workspace-ui.js';

/** Registered MCP servers: list and register; each server's page lists the tools it offers. */
export async function renderMcpServers(root, ctx) {
  ctx.setTitle('MCP servers');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const list = h('div', {}, loading('Loading MCP servers…'));
  replaceChildren(
    root,
    pageHead('MCP servers', { lead: 'Model Context Protocol servers agents reference by id; their tools become the agent’s tools.' }),
    panel('mcp-title', 'Servers', list, createDisclosure('Register a server', registerForm(ctx))),
  );
  const data = await api('GET', `/v1/mcp_servers${query({ page, per_page: 20 })}`, { signal: ctx.signal });
  replaceChildren(
    list,
    dataTable({
      caption: 'MCP servers',
      empty: 'No MCP server registered.',
      columns: [
        { label: 'Name', cell: (s) => h('a', { href: `#${path`/mcp/${s.id}`}` }, s.name) },
        { label: 'URL', cell: (s) => h('span', { class: 'mono' }, s.url) },
        { label: 'Transport', cell: (s) => s.transport },
        { label: 'Auth', cell: (s) => h('span', { class: 'badge' }, s.auth_type) },
        { label: 'Created', cell: (s) => timeEl(s.created_at) },
      ],
      rows: data.items.map((s) => ({ key: s.id, value: s })),
    }),
    pager(data, (n) => ctx.navigate(`#/mcp${query({ page: n })}`), 'MCP server pages'),
  );
}

function registerForm(ctx) {
  const name = input();
  const url = input({ type: 'url', placeholder: 'https://mcp.example.com/mcp' });
  const transport = select([['streamable-http', 'Streamable HTTP'], ['sse', 'SSE (older servers)']], 'streamable-http');
  const auth = select([['none', 'None'], ['api_key', 'API key (Bearer)'], ['oauth2', 'OAuth2 (each user’s token)']], 'none');
  const apiKey = input({ type: 'password', autocomplete: 'new-password' });
  const keyField = field({ id: 'mcp-key', label: 'API key', control: apiKey, name: 'api_key', hint: 'Write-only: shown as ******** afterwards.' });
  const show = () => (keyField.hidden = auth.value !== 'api_key');
  auth.addEventListener('change', show);
  show();
  const allowed = input({ placeholder: 'search, fetch (empty: every tool)' });
  const headers = textarea({ rows: 2, placeholder: '{"X-Workspace": "acme"}' });
  return apiForm({
    label: 'Register an MCP server',
    submitLabel: 'Register',
    fields: [
      h('div', { class: 'ws-row' }, field({ id: 'mcp-name', label: 'Name', control: name, name: 'name' }), field({ id: 'mcp-url', label: 'URL', control: url, name: 'url' })),
      h('div', { class: 'ws-row' }, field({ id: 'mcp-transport', label: 'Transport', control: transport, name: 'transport' }), field({ id: 'mcp-auth', label: 'Authentication', control: auth, name: 'auth_type' })),
      keyField,
      field({ id: 'mcp-allowed', label: 'Allowed tools (comma-separated, optional)', control: allowed, name: 'allowed_tools' }),
      field({ id: 'mcp-headers', label: 'Headers (JSON, optional; values write-only)', control: headers, name: 'headers' }),
    ],
    send: () => {
      const tools = allowed.value.split(',').map((t) => t.trim()).filter(Boolean);
      return api('POST', '/v1/mcp_servers', {
        body: {
          name: name.value,
          url: url.value,
          transport: transport.value,
          auth_type: auth.value,
          ...(auth.value === 'api_key' && { api_key: apiKey.value || null }),
          allowed_tools: tools.length ? tools : null,
          headers: jsonValue(headers, 'headers', {}),
        },
        signal: ctx.signal,
      });
    },
    onDone: (s) => ctx.navigate(`#${path`/mcp/${s.id}`}`),
  });
}

/** One server: its settings (secrets masked by the API) and the tools it offers now. */
export async function renderMcpServer(root, ctx, id) {
  ctx.setTitle('MCP server');
  root.append(loading('Loading MCP server…'));
  const s = await api('GET', path`/v1/mcp_servers/${id}`, { signal: ctx.signal });
  ctx.setTitle(s.name);
  const tools = h('div', {}, loading('Asking the server for its tools…'));
  const status = h('div', {});
  replaceChildren(
    root,
    pageHead(s.name, { lead: s.description, actions: h('button', { type: 'button', class: 'button danger-outline', onclick: remove }, 'Delete') }),
    h('p', {}, h('a', { href: '#/mcp' }, '← All MCP servers')),
    status,
    panel(
      'mcp-facts',
      'Settings',
      facts([
        ['Id', h('span', { class: 'mono' }, s.id)],
        ['URL', h('span', { class: 'mono' }, s.url)],
        ['Transport', s.transport],
        ['Authentication', s.auth_type],
        ['API key', s.api_key],
        ['Headers', Object.keys(s.headers).length ? Object.keys(s.headers).join(', ') : null],
        ['Allowed tools', s.allowed_tools ? s.allowed_tools.join(', ') : 'every tool'],
        ['Created', timeEl(s.created_at)],
      ]),
    ),
    panel('tools-title', 'Tools', tools),
  );
  try {
    const list = await api('GET', path`/v1/mcp_servers/${id}/tools`, { signal: ctx.signal });
    replaceChildren(
      tools,
      dataTable({
        caption: `Tools of ${s.name}`,
        empty: 'The server offers no tool.',
        columns: [
          { label: 'Tool', cell: (t) => [h('span', { class: 'mono' }, t.name), t.read_only ? h('span', { class: 'badge' }, 'read-only') : null] },
          { label: 'Description', cell: (t) => t.description || '—' },
          { label: 'Offered to agents', cell: (t) => (t.allowed ? 'yes' : h('span', { class: 'muted' }, 'no (not in allowed tools)')) },
          { label: 'Input', cell: (t) => jsonDetails('Schema', t.input_schema) },
        ],
        rows: list.map((t) => ({ key: t.name, value: t })),
      }),
    );
  } catch (e) {
    if (!ctx.signal.aborted) replaceChildren(tools, errorAlert(e));
  }

  async function remove() {
    if (!(await confirmAction({ title: 'Delete MCP server', text: `Delete ${s.name}? Agents using it lose its tools.`, confirmLabel: 'Delete' }))) return;
    try {
      await api('DELETE', path`/v1/mcp_servers/${id}`, { signal: ctx.signal });
      ctx.navigate('#/mcp');
    } catch (e) {
      replaceChildren(status, errorAlert(e));
    }
  }
}
