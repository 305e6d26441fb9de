import { api, ApiError, path, query } from '../api.js';
import { announce, h, replaceChildren } from '../dom.js';
import { errorAlert, loading } from '../components.js';
import { buildBody, FIELD_GROUPS, fieldForLoc, fieldId, getPath } from './agent-fields.js';
import { knowledgeBasesEditor, normalizeKnowledgeBases, toolsEditor } from './agent-list-editors.js';

/** What a new agent's form starts with: the API's defaults (spec 2.1, 2.5), so the form shows what will be stored. */
const NEW_AGENT = {
  type: 'manager',
  model_provider: 'anthropic',
  llm_reasoning_effort: 'medium',
  output_format: 'markdown',
  access_scope: 'personal',
  developer_access: true,
  should_stage_before_publish: true,
  discoverable: true,
  with_auto_context_management: true,
  workspace_tools_enabled: true,
  max_self_schedules: 3,
  instructions: { role: [], goal: [], general: '' },
  agno_settings: { session_storage: true, num_history_runs: 10, add_user_to_context: true, pii_detection_mask: true, reasoning_tools_enabled: true, tool_call_limit: 0, max_tool_calls_from_history: 0 },
};

/**
 * Create (#/agents/new) or edit (#/agents/{id}/edit) an agent: every field group of the configuration. The API
 * validates; its 422 issues are shown on the field their `loc` names. Editing sends only what changed, as a draft
 * (the agent page then shows the draft's diff and deploys it) or, with "Save and deploy", as a new version.
 */
export async function renderAgentEditor(root, ctx, agentId) {
  const editing = !!agentId;
  ctx.setTitle(editing ? 'Edit agent' : 'New agent');
  root.append(loading());
  const [agent, options] = await Promise.all([editing ? api('GET', path`/v1/agents/${agentId}`, { signal: ctx.signal }) : null, loadOptions(ctx.signal)]);
  const initial = agent ?? NEW_AGENT;
  if (editing) ctx.setTitle(`Edit ${agent.name}`);

  /** path key -> { read(), input, error, focus() } */
  const controls = new Map();
  const summary = h('div', { id: 'form-errors', tabindex: '-1' });
  const groups = FIELD_GROUPS.map((g) =>
    h('fieldset', { class: 'panel field-group', id: `group-${g.id}` }, h('legend', {}, h('h2', {}, g.title)), g.fields.map((f) => fieldControl(f))),
  );
  const saveDraft = h('button', { type: 'submit', class: 'button primary', value: 'save' }, editing ? 'Save draft' : 'Create agent');
  const saveDeploy = editing ? h('button', { type: 'submit', class: 'button secondary', value: 'deploy' }, 'Save and deploy') : null;
  const form = h(
    'form',
    { class: 'agent-form', novalidate: true, 'aria-labelledby': 'editor-title', onsubmit: (e) => (e.preventDefault(), void submit(e.submitter?.value === 'deploy')) },
    summary,
    groups,
    h('div', { class: 'actions sticky-actions' }, saveDraft, saveDeploy, h('a', { href: editing ? `#${path`/agents/${agentId}`}` : '#/agents', class: 'button secondary' }, 'Cancel')),
  );
  replaceChildren(
    root,
    h('div', { class: 'page-head' }, h('h1', { id: 'editor-title' }, editing ? `Edit ${agent.name}` : 'New agent')),
    editing && agent.has_pending_changes ? h('p', { class: 'alert warning' }, 'This agent has a draft that is not deployed; you are editing the draft.') : null,
    form,
  );
  return controls.get('name').input;

  function fieldControl(f) {
    const key = f.path.join('.');
    const id = fieldId(f.path);
    const value = f.kind === 'knowledge_bases' ? normalizeKnowledgeBases(getPath(initial, f.path)) : getPath(initial, f.path);
    const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
    const hint = f.hint ? h('p', { class: 'hint', id: `${id}-hint` }, f.hint) : null;
    const describedBy = [hint ? `${id}-hint` : null, `${id}-error`].filter(Boolean).join(' ');
    let input;
    let read;
    let extra = null;
    let list = null;
    switch (f.kind) {
      case 'textarea':
        input = h('textarea', { id, rows: f.rows ?? 3 });
        input.value = value ?? '';
        read = () => emptyAs(input.value, value);
        break;
      case 'lines':
        input = h('textarea', { id, rows: 3 });
        input.value = Array.isArray(value) ? value.join('\n') : '';
        read = () => input.value.split('\n').map((s) => s.trim()).filter(Boolean);
        break;
      case 'json':
        input = h('textarea', { id, rows: f.rows ?? 4, class: 'mono', spellcheck: 'false' });
        input.value = value === null || value === undefined ? '' : JSON.stringify(value, null, 2);
        read = () => {
          if (!input.value.trim()) return null;
          try {
            return JSON.parse(input.value);
          } catch (e) {
            throw new FieldError(f, `Not valid JSON: ${e.message}`);
          }
        };
        break;
      case 'select': {
        const choices = f.options === 'providers' ? options.providers : f.options.map((o) => ({ id: o, label: o }));
        if (value && !choices.some((c) => c.id === value)) choices.push({ id: value, label: value });
        input = h('select', { id }, choices.map((c) => h('option', { value: c.id, selected: c.id === value }, c.label)));
        read = () => input.value || null;
        if (f.options === 'providers') input.addEventListener('change', () => void loadModels(input.value));
        break;
      }
      case 'checkbox':
        input = h('input', { type: 'checkbox', id, checked: value === true });
        read = () => input.checked;
        break;
      case 'number':
        input = h('input', { type: 'text', inputmode: 'numeric', id, value: value ?? '', class: 'narrow' });
        // Not a number: sent as typed, so the API's own message names the problem on this field.
        read = () => (input.value.trim() === '' ? undefined : Number.isFinite(Number(input.value)) ? Number(input.value) : input.value);
        break;
      case 'credentials': {
        const name = h('input', { type: 'text', id: `${id}-name`, value: value?.name ?? '', placeholder: 'a name for the key', 'aria-label': 'API key name' });
        input = h('input', { type: 'password', id, autocomplete: 'off', placeholder: value ? 'stored: leave empty to keep' : '' });
        extra = name;
        // Nothing typed: nothing sent, the stored key stays (the API only ever shows it as ********).
        read = () => (input.value ? { name: name.value.trim() || 'api_key', description: null, value: input.value } : undefined);
        break;
      }
      case 'tools':
        list = toolsEditor({ id, initial: value, options: options.tools, editing });
        read = list.read;
        break;
      case 'knowledge_bases':
        list = knowledgeBasesEditor({ id, initial: value, options: options.knowledgeBases });
        read = list.read;
        break;
      default:
        input = h('input', { type: 'text', id, value: value ?? '', list: f.list ? `${id}-list` : null });
        if (f.list) extra = h('datalist', { id: `${id}-list` });
        read = () => emptyAs(input.value, value);
    }
    const target = input ?? list.element;
    target.setAttribute('aria-describedby', describedBy);
    if (list) {
      // A list of rows has no single input to label: it is a named group, and its errors describe the group.
      target.setAttribute('role', 'group');
      target.setAttribute('aria-labelledby', `${id}-label`);
    }
    controls.set(key, { field: f, read, input: target, list, error, focus: () => (input ?? list.focusTarget()).focus() });
    if (f.kind === 'checkbox') return h('div', { class: 'form-field checkbox-field' }, input, h('label', { for: id }, f.label), hint, error);
    const labelFor = list ? null : id;
    return h(
      'div',
      { class: 'form-field' },
      labelFor ? h('label', { for: labelFor }, f.label) : h('span', { class: 'label', id: `${id}-label` }, f.label),
      f.kind === 'credentials' ? h('div', { class: 'copy-row' }, extra, input) : [target, extra],
      hint,
      error,
    );
  }

  async function loadModels(provider) {
    const dl = document.getElementById(`${fieldId(['model_name'])}-list`);
    if (!dl || !provider) return;
    const models = await api('GET', path`/v1/misc/llm_providers/${provider}/models`, { signal: ctx.signal }).catch(() => []);
    replaceChildren(dl, models.map((m) => h('option', { value: m.model_id }, m.display_name)));
  }
  void loadModels(initial.model_provider);

  function clearErrors() {
    replaceChildren(summary);
    for (const c of controls.values()) {
      c.error.hidden = true;
      c.error.textContent = '';
      c.input.removeAttribute('aria-invalid');
    }
  }

  /** Each issue on its field; those no field owns in the summary. Focus goes to the first field with a problem. */
  function showErrors(issues) {
    const unplaced = [];
    let first = null;
    for (const issue of issues) {
      const hit = fieldForLoc(issue.loc);
      const c = hit && controls.get(hit.field.path.join('.'));
      if (!c) {
        unplaced.push(issue);
        continue;
      }
      const where = hit.rest.length ? `${hit.rest.join('.')}: ` : '';
      c.error.textContent = [c.error.textContent, `${where}${issue.msg}`].filter(Boolean).join(' ');
      c.error.hidden = false;
      c.input.setAttribute('aria-invalid', 'true');
      first ??= c;
    }
    const count = issues.length;
    replaceChildren(
      summary,
      h(
        'div',
        { class: 'alert error', role: 'alert' },
        h('p', {}, `The agent was not saved: ${count} problem${count === 1 ? '' : 's'}.`),
        unplaced.length ? h('ul', {}, unplaced.map((i) => h('li', {}, `${(i.loc ?? []).join('.')}: ${i.msg}`))) : null,
      ),
    );
    if (first) first.focus();
    else summary.focus();
  }

  function values() {
    const out = [];
    for (const [key, c] of controls) {
      let v = c.read();
      // A new agent leaves what the form does not set to the API's defaults.
      if (!editing && (v === null || (Array.isArray(v) && !v.length && key !== 'name'))) v = undefined;
      out.push([key, v]);
    }
    return out;
  }

  async function submit(deploy) {
    clearErrors();
    let body;
    try {
      body = buildBody(values(), editing ? comparable(initial) : null);
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      return showErrors([{ loc: ['body', ...e.field.path], msg: e.message }]);
    }
    const removed = editing ? controls.get('tools').list.removed() : [];
    if (editing && !Object.keys(body).length && !removed.length && !deploy) return showNote('Nothing changed.');
    for (const b of [saveDraft, saveDeploy]) if (b) b.disabled = true;
    try {
      let saved;
      if (!editing) saved = await api('POST', '/v1/agents', { body, signal: ctx.signal });
      else {
        // Detaching first: a PATCH that re-sends the tools list must not bring a removed tool back.
        for (const ref of removed) await api('DELETE', `${path`/v1/agents/${agentId}/tools/${ref}`}${query({ deploy: false })}`, { signal: ctx.signal });
        if (Object.keys(body).length) saved = await api('PATCH', `${path`/v1/agents/${agentId}`}${query({ deploy })}`, { body, signal: ctx.signal });
        else if (deploy) saved = await api('PUT', path`/v1/agents/${agentId}`, { signal: ctx.signal });
        else saved = await api('GET', path`/v1/agents/${agentId}`, { signal: ctx.signal });
      }
      // An agent that does not stage edits publishes on every save: say what happened, not what was asked.
      announce(!editing ? `Agent ${saved.name} created` : saved.has_pending_changes ? 'Draft saved' : `Deployed version ${saved.version}`);
      ctx.navigate(`#${path`/agents/${saved.id}`}`);
    } catch (e) {
      if (ctx.signal.aborted) return;
      if (e instanceof ApiError && e.status === 422 && Array.isArray(e.detail)) showErrors(e.detail);
      else {
        replaceChildren(summary, errorAlert(e));
        summary.focus();
      }
    } finally {
      for (const b of [saveDraft, saveDeploy]) if (b) b.disabled = false;
    }
  }

  function showNote(text) {
    replaceChildren(summary, h('p', { class: 'alert warning', role: 'status' }, text));
  }
}

/** The stored agent as the form reads it back (knowledge bases without the fields the server fills). */
function comparable(agent) {
  return { ...agent, knowledge_bases: normalizeKnowledgeBases(agent.knowledge_bases), tools: undefined };
}

/** An emptied text box: the empty string where the stored value was one, otherwise null (the API's "none"). */
function emptyAs(text, stored) {
  return text === '' ? (stored === '' ? '' : null) : text;
}

class FieldError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/** Suggestions for the editor; a list that fails to load leaves its inputs free-text. */
async function loadOptions(signal) {
  const list = (url, map) =>
    api('GET', url, { signal })
      .then((r) => (Array.isArray(r) ? r : (r?.items ?? [])).map(map))
      .catch(() => []);
  const [providers, knowledgeBases, functions, mcp, agents, skills] = await Promise.all([
    list('/v1/misc/llm_providers', (p) => ({ id: p.internal_identifier, label: p.name })),
    list('/v1/knowledge?per_page=50', (k) => ({ id: k.id, label: k.name })),
    list('/v1/custom_functions?per_page=50', (f) => ({ id: f.id, label: f.name })),
    list('/v1/mcp_servers?per_page=50', (m) => ({ id: m.id, label: m.name })),
    list('/v1/agents?per_page=50', (a) => ({ id: a.id, label: a.name })),
    list('/v1/skills?per_page=50', (s) => ({ id: s.name, label: s.description ?? s.name })),
  ]);
  if (!providers.length) providers.push({ id: 'openai', label: 'OpenAI' }, { id: 'anthropic', label: 'Anthropic' });
  return { providers, knowledgeBases, tools: { custom_function: functions, mcp, agent: agents, skill: skills } };
}
