import { api, path } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { errorAlert, facts, jsonBlock, loading, statusBadge, timeEl } from '../components.js';
import { prettyJson } from '../format.js';
import { apiForm, field, input, jsonValue, pageHead, panel, textarea } from './workspace-ui.js';

/** One custom function: an editor (saved with PATCH, analysed again) and a test run with arguments. */
export async function renderFunction(root, ctx, id) {
  ctx.setTitle('Custom function');
  root.append(loading('Loading function…'));
  let fn = await api('GET', path`/v1/custom_functions/${id}`, { signal: ctx.signal });
  ctx.setTitle(fn.name);
  const state = h('div', {});
  const name = input({ value: fn.name });
  const description = input({ value: fn.description ?? '' });
  const code = textarea({ rows: 16, class: 'code-editor', value: fn.code });
  const schema = textarea({ rows: 6, value: fn.input_schema ? prettyJson(fn.input_schema) : '' });
  // Tab indents inside the editor; Escape then Tab leaves it (keyboard users are not trapped).
  let escaped = false;
  code.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') escaped = true;
    else if (e.key === 'Tab' && !e.shiftKey && !escaped) {
      e.preventDefault();
      code.setRangeText('  ', code.selectionStart, code.selectionEnd, 'end');
    } else escaped = false;
  });
  const editor = apiForm({
    label: 'Edit the function',
    submitLabel: 'Save',
    fields: [
      h('div', { class: 'ws-row' }, field({ id: 'fe-name', label: 'Name', control: name, name: 'name' }), field({ id: 'fe-description', label: 'Description', control: description, name: 'description' })),
      field({ id: 'fe-code', label: 'Code (JavaScript)', control: code, name: 'code', hint: 'Tab indents; press Escape, then Tab, to leave the editor.' }),
      field({ id: 'fe-schema', label: 'Input schema (JSON Schema)', control: schema, name: 'input_schema' }),
    ],
    send: () =>
      api('PATCH', path`/v1/custom_functions/${id}`, {
        body: { name: name.value, description: description.value || null, code: code.value, input_schema: jsonValue(schema, 'input_schema', null) },
        signal: ctx.signal,
      }),
    onDone: (saved) => {
      fn = saved;
      showState();
      announce(`Saved; status ${saved.status}`);
    },
    extra: [h('button', { type: 'button', class: 'button danger-outline', onclick: remove }, 'Delete')],
  });

  const args = textarea({ rows: 5, value: prettyJson(exampleArgs(fn.input_schema)) });
  const output = h('div', { class: 'try-result', 'aria-live': 'polite' });
  const runner = apiForm({
    label: 'Test run',
    submitLabel: 'Run',
    fields: [field({ id: 'fr-args', label: 'Arguments (JSON)', control: args, name: 'args' })],
    send: () => api('POST', path`/v1/custom_functions/${id}/execute`, { body: { args: jsonValue(args, 'args', {}) }, signal: ctx.signal }),
    onDone: (r) =>
      replaceChildren(
        output,
        facts([
          ['Outcome', statusBadge(r.status === 'success' ? 'completed' : 'failed')],
          ['Time', `${r.execution_time_ms} ms`],
          ['Error', r.error ? h('span', { class: 'entry-error' }, r.error) : null],
        ]),
        r.status === 'success' ? jsonBlock(r.result, 'Result') : null,
        r.logs?.length ? [h('h3', {}, 'Logs'), h('pre', { class: 'text-block', tabindex: '0' }, r.logs.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'))] : null,
      ),
  });

  replaceChildren(
    root,
    pageHead(fn.name, { lead: fn.description }),
    h('p', {}, h('a', { href: '#/functions' }, '← All functions')),
    state,
    h('div', { class: 'grid-2' }, panel('editor-title', 'Code', editor), panel('run-title', 'Test run', runner, output)),
  );
  showState();

  function showState() {
    replaceChildren(
      state,
      facts([
        ['Status', statusBadge(fn.status)],
        ['Id', h('span', { class: 'mono' }, fn.id)],
        ['Updated', timeEl(fn.updated_at)],
      ]),
      fn.analysis_error_details ? h('div', { class: 'alert error', role: 'alert' }, `Analysis: ${typeof fn.analysis_error_details === 'string' ? fn.analysis_error_details : JSON.stringify(fn.analysis_error_details)}`) : null,
    );
  }

  async function remove() {
    if (!(await confirmAction({ title: 'Delete function', text: `Delete ${fn.name}? Agents using it lose the tool.`, confirmLabel: 'Delete' }))) return;
    try {
      await api('DELETE', path`/v1/custom_functions/${id}`, { signal: ctx.signal });
      ctx.navigate('#/functions');
    } catch (e) {
      replaceChildren(state, errorAlert(e));
    }
  }
}

/** Arguments to start from: the schema's required properties with empty values of their type. */
function exampleArgs(schema) {
  const props = schema?.properties ?? {};
  const out = {};
  for (const [k, s] of Object.entries(props)) {
    const t = Array.isArray(s?.type) ? s.type[0] : s?.type;
    out[k] = s?.example ?? (t === 'number' || t === 'integer' ? 0 : t === 'boolean' ? false : t === 'array' ? [] : t === 'object' ? {} : '');
  }
  return out;
}
