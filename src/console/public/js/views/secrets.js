import { api, ApiError, path, query } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, loading, pager, timeEl } from '../components.js';
import { apiForm, field, input, pageHead, panel } from './workspace-ui.js';

/**
 * Organization secrets, write-only: names and descriptions are listed, values go in through a password field and
 * never come back (the API has no way to read them). Replacing a value is writing it again under the same name.
 */
export async function renderSecrets(root, ctx) {
  ctx.setTitle('Secrets');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const list = h('div', {}, loading('Loading secrets…'));
  const status = h('div', {});
  const name = input({ autocomplete: 'off', placeholder: 'STRIPE_KEY' });
  const value = input({ type: 'password', autocomplete: 'new-password' });
  const description = input();
  const form = apiForm({
    label: 'Store a secret',
    submitLabel: 'Save secret',
    fields: [
      h(
        'div',
        { class: 'ws-row' },
        field({ id: 'sec-name', label: 'Name', control: name, name: 'secret_name', hint: 'Letters, digits, _ . -' }),
        field({ id: 'sec-value', label: 'Value', control: value, name: 'value', hint: 'Write-only: it cannot be shown again.' }),
        field({ id: 'sec-description', label: 'Description', control: description, name: 'description' }),
      ),
    ],
    send: async () => {
      // An empty name would be another URL (404): the API's own 422 for a bad name, raised here, lands on the field.
      if (!name.value) throw new ApiError(422, [{ loc: ['path', 'secret_name'], msg: 'Field required' }]);
      return api('PUT', path`/v1/secrets/${name.value}`, { body: { value: value.value, description: description.value || null }, signal: ctx.signal });
    },
    onDone: async (secret, f) => {
      f.reset();
      announce(`Secret ${secret.name} saved`);
      await load();
    },
  });
  replaceChildren(
    root,
    pageHead('Secrets', { lead: 'Values agents and connections reference by name. Stored encrypted; never shown again.' }),
    panel('store-title', 'Store or replace a secret', form),
    panel('secrets-title', 'Secrets', status, list),
  );
  await load();

  async function load() {
    const data = await api('GET', `/v1/secrets${query({ page, per_page: 50 })}`, { signal: ctx.signal });
    replaceChildren(
      list,
      dataTable({
        caption: 'Secrets',
        empty: 'No secret yet.',
        columns: [
          { label: 'Name', cell: (s) => h('span', { class: 'mono' }, s.name) },
          { label: 'Description', cell: (s) => s.description || '—' },
          { label: 'Value', cell: () => h('span', { class: 'muted' }, 'hidden (write-only)') },
          { label: 'Updated', cell: (s) => timeEl(s.updated_at) },
          {
            label: 'Actions',
            cell: (s) =>
              h(
                'div',
                { class: 'actions' },
                h('button', { type: 'button', class: 'button small secondary', 'aria-label': `Replace ${s.name}`, onclick: () => replace(s) }, 'Replace value'),
                h('button', { type: 'button', class: 'button small danger-outline', 'aria-label': `Delete ${s.name}`, onclick: () => remove(s) }, 'Delete'),
              ),
          },
        ],
        rows: data.items.map((s) => ({ key: s.name, value: s })),
      }),
      pager(data, (n) => ctx.navigate(`#/secrets${query({ page: n })}`), 'Secret pages'),
    );
  }

  function replace(s) {
    name.value = s.name;
    description.value = s.description ?? '';
    value.value = '';
    value.focus();
  }

  async function remove(s) {
    if (!(await confirmAction({ title: 'Delete secret', text: `Delete ${s.name}? Agents and connections using it stop working.`, confirmLabel: 'Delete' }))) return;
    try {
      await api('DELETE', path`/v1/secrets/${s.name}`, { signal: ctx.signal });
      announce(`Secret ${s.name} deleted`);
      replaceChildren(status);
      await load();
    } catch (e) {
      replaceChildren(status, errorAlert(e));
    }
  }
}
