import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { errorAlert, facts, jsonBlock, jsonDetails, loading } from '../components.js';
import { prettyJson } from '../format.js';
import { apiForm, field, jsonValue, pageHead, panel, select, textarea } from './workspace-ui.js';
import { connectionForm } from './connection-form.js';

/** The parts of an invoke body, in the order a reader expects them. */
const PARTS = [
  ['path_params', 'Path parameters'],
  ['query_params', 'Query parameters'],
  ['headers', 'Headers'],
  ['cookies', 'Cookies'],
  ['body_params', 'Body'],
];

/**
 * One operation: its resolved input and output schema (read through a connection, as agents see it) and a form
 * that invokes it through a chosen connection.
 */
export async function renderOperation(root, ctx, connectorId, operationId) {
  ctx.setTitle('Operation');
  root.append(loading('Loading operation…'));
  const [connector, ops, conns] = await Promise.all([
    api('GET', path`/v1/connectors/${connectorId}`, { signal: ctx.signal }),
    api('GET', path`/v1/tools/connectors/${connectorId}/operations`, { signal: ctx.signal }),
    api('GET', `${path`/v1/connectors/${connectorId}/connections`}${query({ per_page: 50 })}`, { signal: ctx.signal }),
  ]);
  const op = ops.find((o) => o.id === operationId || o.operationId === operationId);
  if (!op) throw Object.assign(new Error('Operation not found'), { status: 404 });
  ctx.setTitle(`${op.method.toUpperCase()} ${op.path}`);
  const here = (connection) => `#${path`/connectors/${connectorId}/operations/${op.id}`}${query({ connection })}`;

  const head = [
    pageHead(h('span', {}, h('span', { class: `badge method method-${op.method.toLowerCase()}` }, op.method.toUpperCase()), ' ', h('span', { class: 'mono' }, op.path)), { lead: op.summary }),
    h('p', {}, h('a', { href: `#${path`/connectors/${connectorId}`}` }, `← ${connector.name}`)),
    op.description && op.description !== op.summary ? h('p', { class: 'prewrap' }, op.description) : null,
  ];
  if (!conns.items.length) {
    replaceChildren(
      root,
      head,
      panel('no-connection', 'Connect first', h('p', {}, 'The schema is read, and the operation run, through a connection: create one.'), connectionForm(ctx, connector, () => ctx.navigate(here(), { replace: true }))),
    );
    return;
  }
  const chosen = conns.items.find((c) => c.id === ctx.params.get('connection')) ?? conns.items[0];
  const picker = select(conns.items.map((c) => [c.id, c.name]), chosen.id);
  picker.addEventListener('change', () => ctx.navigate(here(picker.value), { replace: true }));
  const schemaSlot = h('div', {}, loading('Loading schema…'));
  const trySlot = h('div', {});
  replaceChildren(
    root,
    head,
    h('div', { class: 'ws-inline-form' }, field({ id: 'op-connection', label: 'Connection', control: picker })),
    h('div', { class: 'grid-2' }, panel('schema-title', 'Schema', schemaSlot), panel('try-title', 'Try it', trySlot)),
  );
  let schema;
  try {
    schema = await api('GET', path`/v1/tools/connectors/${connectorId}/connections/${chosen.id}/${op.id}/schema`, { signal: ctx.signal });
  } catch (e) {
    if (!ctx.signal.aborted) replaceChildren(schemaSlot, errorAlert(e));
    return;
  }
  replaceChildren(
    schemaSlot,
    facts([
      ['Operation id', h('span', { class: 'mono' }, schema.operationId)],
      ['Catalog id', h('span', { class: 'mono' }, schema.id)],
    ]),
    h('h3', {}, 'Input'),
    inputSummary(schema.input),
    jsonDetails('Input schema (JSON)', schema.input),
    h('h3', {}, 'Output'),
    jsonDetails('Output schema (JSON)', schema.output),
  );
  replaceChildren(trySlot, tryForm(ctx, connectorId, chosen, op, schema.input));
}

/** Each part's fields with type and whether required: the schema a reader needs before the JSON. */
function inputSummary(input) {
  const props = input?.properties ?? {};
  // A part with no fields that the operation does not require (a GET's empty body) says nothing: left out.
  const parts = PARTS.filter(([k]) => props[k] && (props[k].properties || (input.required ?? []).includes(k)));
  if (!parts.length) return h('p', { class: 'muted' }, 'This operation takes no input.');
  return parts.map(([k, label]) => {
    const part = props[k];
    const fields = part.properties ? Object.entries(part.properties) : [];
    const required = new Set(part.required ?? []);
    return h(
      'div',
      { class: 'schema-part' },
      h('h4', {}, label, (input.required ?? []).includes(k) ? h('span', { class: 'badge' }, 'required') : null),
      fields.length
        ? h(
            'ul',
            { class: 'plain schema-fields' },
            fields.map(([name, s]) =>
              h('li', {}, h('span', { class: 'mono' }, name), ' ', h('span', { class: 'muted' }, typeOf(s)), required.has(name) ? h('span', { class: 'badge' }, 'required') : null, s.description ? h('div', { class: 'hint' }, s.description) : null),
            ),
          )
        : h('p', { class: 'muted' }, typeOf(part)),
    );
  });
}

function typeOf(s) {
  if (!s || typeof s !== 'object') return 'any';
  if (s.enum) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (s.type === 'array') return `array of ${typeOf(s.items)}`;
  if (Array.isArray(s.type)) return s.type.join(' | ');
  return s.type ?? (s.oneOf || s.anyOf ? 'one of several shapes' : 'any');
}

/** A starting payload: every required field of every part, with a placeholder of its type. */
export function skeleton(input) {
  const out = {};
  for (const [k] of PARTS) {
    const part = input?.properties?.[k];
    if (!part) continue;
    if (!part.properties) continue;
    const req = part.required ?? [];
    if (!req.length && !(input.required ?? []).includes(k)) continue;
    out[k] = Object.fromEntries(req.map((name) => [name, placeholder(part.properties[name])]));
  }
  return out;
}

function placeholder(s) {
  if (s?.example !== undefined) return s.example;
  if (s?.default !== undefined) return s.default;
  if (s?.enum) return s.enum[0];
  switch (Array.isArray(s?.type) ? s.type[0] : s?.type) {
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return '';
  }
}

function tryForm(ctx, connectorId, connection, op, input) {
  const payload = textarea({ rows: 10, class: 'mono', value: prettyJson(skeleton(input)) });
  const result = h('div', { class: 'try-result', 'aria-live': 'polite' });
  return [
    apiForm({
      label: 'Try the operation',
      submitLabel: 'Send request',
      fields: [field({ id: 'try-payload', label: `Request through “${connection.name}” (JSON)`, control: payload, name: 'payload', hint: 'path_params, query_params, headers, cookies and body_params, checked against the input schema.' })],
      send: () => api('POST', path`/v1/tools/connectors/${connectorId}/connections/${connection.id}/${op.id}/invoke`, { body: jsonValue(payload, 'payload', {}), signal: ctx.signal }),
      onDone: (r) =>
        replaceChildren(
          result,
          h('h3', {}, 'Response'),
          facts([
            ['Status', h('span', { class: `badge ${r.status_code < 400 ? 'status-completed' : 'status-failed'}` }, String(r.status_code))],
            ['Time', `${r.execution_time_ms} ms`],
          ]),
          jsonBlock(r.result, 'Response body'),
          jsonDetails('Response headers', r.headers),
        ),
    }),
    result,
  ];
}
