import { api, path, query } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, loading, pager } from '../components.js';
import { apiForm, createDisclosure, field, input, pageHead, panel, textarea } from './workspace-ui.js';

/** Skills: built-in ones and the organization's, with their instructions; organization skills can be added and deleted. */
export async function renderSkills(root, ctx) {
  ctx.setTitle('Skills');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const list = h('div', {}, loading('Loading skills…'));
  const status = h('div', {});
  const name = input({ placeholder: 'release-notes' });
  const description = input();
  const instructions = textarea({ rows: 8 });
  const form = apiForm({
    label: 'New skill',
    submitLabel: 'Create skill',
    fields: [
      h('div', { class: 'ws-row' }, field({ id: 'sk-name', label: 'Name', control: name, name: 'name' }), field({ id: 'sk-description', label: 'Description', control: description, name: 'description', hint: 'What the agent reads to decide whether to load it.' })),
      field({ id: 'sk-instructions', label: 'Instructions (Markdown)', control: instructions, name: 'instructions' }),
    ],
    send: () => api('POST', '/v1/skills', { body: { name: name.value, description: description.value, instructions: instructions.value }, signal: ctx.signal }),
    onDone: async (s, f) => {
      f.reset();
      announce(`Skill ${s.name} created`);
      await load();
    },
  });
  replaceChildren(
    root,
    pageHead('Skills', { lead: 'Instructions an agent loads when a task needs them.' }),
    panel('skills-title', 'Skills', status, list, createDisclosure('New skill', form)),
  );
  await load();

  async function load() {
    const data = await api('GET', `/v1/skills${query({ page, per_page: 50 })}`, { signal: ctx.signal });
    replaceChildren(
      list,
      dataTable({
        caption: 'Skills',
        empty: 'No skill.',
        columns: [
          { label: 'Name', cell: (s) => h('span', { class: 'mono' }, s.name) },
          { label: 'Source', cell: (s) => h('span', { class: 'badge' }, s.source) },
          { label: 'Description', cell: (s) => s.description },
          { label: 'Instructions', cell: (s) => h('details', { class: 'json-details' }, h('summary', {}, 'Show'), h('pre', { class: 'text-block', tabindex: '0' }, s.instructions)) },
          {
            label: '',
            cell: (s) => (s.source === 'builtin' ? null : h('button', { type: 'button', class: 'button small danger-outline', 'aria-label': `Delete ${s.name}`, onclick: () => remove(s) }, 'Delete')),
          },
        ],
        rows: data.items.map((s) => ({ key: s.name, value: s })),
      }),
      pager(data, (n) => ctx.navigate(`#/skills${query({ page: n })}`), 'Skill pages'),
    );
  }

  async function remove(s) {
    if (!(await confirmAction({ title: 'Delete skill', text: `Delete ${s.name}?`, confirmLabel: 'Delete' }))) return;
    try {
      await api('DELETE', path`/v1/skills/${s.name}`, { signal: ctx.signal });
      await load();
    } catch (e) {
      replaceChildren(status, errorAlert(e));
    }
  }
}
