import { h } from '../dom.js';
import { KB_STRATEGIES, TOOL_TYPES, toolEntry, toolRef } from './agent-fields.js';

/**
 * The two list fields of the agent editor: tools and knowledge bases. Each returns { element, read(), removed() }:
 * `read()` is the value for the body, `removed()` (tools only) the references to detach from an existing agent.
 * Inputs are plain text with suggestions (a <datalist> of the organization's resources), so an id pasted from
 * elsewhere works too and nothing is hidden behind a picker that failed to load.
 */

/** `options`: { custom_function: [{id, label}], mcp: [...], agent: [...], skill: [...] } for the suggestions. */
export function toolsEditor({ id, initial, options, editing }) {
  const existing = Array.isArray(initial) ? initial : [];
  const kept = existing.map(() => true);
  const rows = h('ul', { class: 'plain list-editor', id: `${id}-rows` });
  const lists = h('div', {});
  for (const [type, items] of Object.entries(options ?? {})) {
    lists.append(h('datalist', { id: `${id}-list-${type}` }, (items ?? []).map((o) => h('option', { value: o.id }, o.label))));
  }

  existing.forEach((entry, i) => {
    const label = `${entry.type} ${toolRef(entry)}`;
    const li = h(
      'li',
      { class: 'list-row' },
      h('span', { class: 'badge' }, entry.type),
      ' ',
      h('span', { class: 'mono' }, toolRef(entry)),
      ' ',
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary small',
          'aria-pressed': 'false',
          'aria-label': `Remove tool ${label}`,
          onclick: (ev) => {
            kept[i] = !kept[i];
            ev.currentTarget.setAttribute('aria-pressed', String(!kept[i]));
            ev.currentTarget.textContent = kept[i] ? 'Remove' : 'Keep';
            li.classList.toggle('removed', !kept[i]);
          },
        },
        'Remove',
      ),
    );
    rows.append(li);
  });

  const added = [];
  const addRow = () => {
    const n = added.length;
    const type = h('select', { id: `${id}-new-${n}-type`, 'aria-label': `Type of new tool ${n + 1}` }, TOOL_TYPES.map((t) => h('option', { value: t }, t)));
    const ref = h('input', { type: 'text', id: `${id}-new-${n}-ref`, 'aria-label': `Id of new tool ${n + 1}`, placeholder: 'id, name or URL', list: `${id}-list-custom_function` });
    const ops = h('input', { type: 'text', id: `${id}-new-${n}-ops`, 'aria-label': `Operation ids of new tool ${n + 1}`, placeholder: 'operation ids (action)', hidden: true });
    type.addEventListener('change', () => {
      ref.setAttribute('list', `${id}-list-${type.value}`);
      ops.hidden = type.value !== 'action';
    });
    const row = { type, ref, ops, li: null };
    row.li = h(
      'li',
      { class: 'list-row' },
      type,
      ref,
      ops,
      h('button', { type: 'button', class: 'button secondary small', 'aria-label': `Discard new tool ${n + 1}`, onclick: () => (row.li.remove(), (row.gone = true)) }, 'Discard'),
    );
    added.push(row);
    rows.append(row.li);
    ref.focus();
  };

  const element = h(
    'div',
    { class: 'list-field', id },
    lists,
    rows,
    h('button', { type: 'button', class: 'button secondary small', onclick: addRow }, 'Add a tool'),
    editing ? h('p', { class: 'hint' }, 'Removed tools are detached when you save; new ones are attached. Both go to the draft unless you save and deploy.') : null,
  );
  return {
    element,
    focusTarget: () => element.querySelector('input, select, button'),
    /** New entries only when editing (the server keeps the others); every entry when creating. */
    read() {
      const fresh = added.filter((r) => !r.gone && r.ref.value.trim()).map((r) => toolEntry(r.type.value, r.ref.value, r.ops.value));
      if (!editing) return fresh.length ? fresh : undefined;
      return fresh.length ? [...existing.filter((_, i) => kept[i]), ...fresh] : undefined;
    },
    removed: () => existing.filter((_, i) => !kept[i]).map(toolRef),
  };
}

/** `options`: [{id, label}] of the organization's knowledge bases. */
export function knowledgeBasesEditor({ id, initial, options }) {
  const rows = h('ul', { class: 'plain list-editor' });
  const entries = [];
  const add = (kb = {}) => {
    const n = entries.length;
    const kbId = h('input', { type: 'text', id: `${id}-${n}-id`, 'aria-label': `Knowledge base ${n + 1}`, list: `${id}-list`, value: kb.id ?? '', placeholder: 'knowledge base id' });
    const strategy = h('select', { id: `${id}-${n}-strategy`, 'aria-label': `Strategy of knowledge base ${n + 1}` }, KB_STRATEGIES.map((s) => h('option', { value: s, selected: s === (kb.strategy ?? 'vanilla') }, s)));
    const rw = h('input', { type: 'checkbox', id: `${id}-${n}-rw`, checked: kb.rw === true });
    const entry = { kbId, strategy, rw, documents: kb.documents, gone: false, li: null };
    const name = (options ?? []).find((o) => o.id === kb.id)?.label ?? kb.name;
    entry.li = h(
      'li',
      { class: 'list-row' },
      kbId,
      name ? h('span', { class: 'muted' }, name) : null,
      strategy,
      h('label', { for: rw.id, class: 'inline-label' }, rw, ' may write'),
      h('button', { type: 'button', class: 'button secondary small', 'aria-label': `Remove knowledge base ${n + 1}`, onclick: () => (entry.li.remove(), (entry.gone = true)) }, 'Remove'),
    );
    entries.push(entry);
    rows.append(entry.li);
    return kbId;
  };
  for (const kb of Array.isArray(initial) ? initial : []) add(kb);
  const element = h(
    'div',
    { class: 'list-field', id },
    h('datalist', { id: `${id}-list` }, (options ?? []).map((o) => h('option', { value: o.id }, o.label))),
    rows,
    h('button', { type: 'button', class: 'button secondary small', onclick: () => add().focus() }, 'Add a knowledge base'),
  );
  return {
    element,
    focusTarget: () => element.querySelector('input, select, button'),
    read: () => normalizeKnowledgeBases(entries.filter((e) => !e.gone && e.kbId.value.trim()).map((e) => ({ id: e.kbId.value.trim(), strategy: e.strategy.value, rw: e.rw.checked, documents: e.documents }))),
  };
}

/** The fields the editor sets on an agent's knowledge base (the server fills name and description). */
export function normalizeKnowledgeBases(list) {
  return (Array.isArray(list) ? list : []).map((k) => ({ id: k.id, strategy: k.strategy ?? 'vanilla', rw: k.rw === true, ...(k.documents?.length ? { documents: k.documents } : {}) }));
}
