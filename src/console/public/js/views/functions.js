import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, loading, pager, statusBadge, timeEl } from '../components.js';
import { apiForm, createDisclosure, field, input, jsonValue, pageHead, panel, textarea } from './workspace-ui.js';

export const STARTER_CODE = `async function run(args) {
  // args: the tool call's arguments, checked against the input schema
  return { echo: args };
}`;

/** Custom functions: the list and a create form; each function has an editor page with a test run. */
export async function renderFunctions(root, ctx) {
  ctx.setTitle('Custom functions');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const list = h('div', {}, loading('Loading functions…'));
  const name = input({ placeholder: 'word_count' });
  const description = input();
  const code = textarea({ rows: 8, class: 'code-editor', value: STARTER_CODE });
  const schema = textarea({ rows: 4, placeholder: '{"type": "object", "properties": {"text": {"type": "string"}}}' });
  const form = apiForm({
    label: 'New custom function',
    submitLabel: 'Create function',
    fields: [
      h('div', { class: 'ws-row' }, field({ id: 'fn-name', label: 'Name', control: name, name: 'name' }), field({ id: 'fn-description', label: 'Description', control: description, name: 'description' })),
      field({ id: 'fn-code', label: 'Code (JavaScript)', control: code, name: 'code', hint: 'Defines async function run(args); runs in a sandbox with memory and time limits.' }),
      field({ id: 'fn-schema', label: 'Input schema (JSON Schema, optional)', control: schema, name: 'input_schema' }),
    ],
    send: () =>
      api('POST', '/v1/custom_functions', {
        body: { name: name.value, description: description.value || null, code: code.value, input_schema: jsonValue(schema, 'input_schema', null) },
        signal: ctx.signal,
      }),
    onDone: (fn) => ctx.navigate(`#${path`/functions/${fn.id}`}`),
  });
  replaceChildren(
    root,
    pageHead('Custom functions', { lead: 'JavaScript tools agents call; each runs in a sandbox.' }),
    panel('functions-title', 'Functions', list, createDisclosure('New function', form)),
  );
  const data = await api('GET', `/v1/custom_functions${query({ page, per_page: 20 })}`, { signal: ctx.signal });
  replaceChildren(
    list,
    dataTable({
      caption: 'Custom functions',
      empty: 'No custom function yet.',
      columns: [
        { label: 'Name', cell: (f) => h('a', { href: `#${path`/functions/${f.id}`}`, class: 'mono' }, f.name) },
        { label: 'Description', cell: (f) => f.description || '—' },
        { label: 'Status', cell: (f) => statusBadge(f.status) },
        { label: 'Updated', cell: (f) => timeEl(f.updated_at) },
      ],
      rows: data.items.map((f) => ({ key: f.id, value: f })),
    }),
    pager(data, (n) => ctx.navigate(`#/functions${query({ page: n })}`), 'Function pages'),
  );
}
