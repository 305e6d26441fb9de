import { ApiError, readBody, session } from '../api.js';
import { announce, h, replaceChildren } from '../dom.js';
import { errorAlert } from '../components.js';

/**
 * What the workspace pages (connectors, knowledge, secrets, functions, MCP servers, skills) share: labelled fields
 * whose 422 problems show on the field itself, forms that keep the user's input when the API refuses it, and a
 * multipart upload (api.js speaks JSON only).
 */

/** A labelled control; `name` is the API field whose 422 `loc` ends with it (the error shows under the control). */
export function field({ id, label, control, hint, name }) {
  control.id = id;
  if (name) control.dataset.field = name;
  if (hint) control.setAttribute('aria-describedby', `${id}-hint`);
  return h('div', { class: 'field ws-field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null, h('p', { class: 'field-error', id: `${id}-error`, hidden: true }));
}

export const input = (attrs = {}) => h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs });
export const textarea = (attrs = {}) => h('textarea', { rows: 6, spellcheck: 'false', ...attrs });
export const select = (options, value) => h('select', {}, options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));

/**
 * Wires a form: on submit, `send()` runs with the button disabled; an ApiError 422 marks each named field with its
 * message (and focuses the first), any other error shows above the buttons. Resolves with `send`'s value or null.
 */
export function apiForm({ label, fields, submitLabel, send, onDone, extra = [] }) {
  const status = h('div', { class: 'form-status' });
  const button = h('button', { type: 'submit', class: 'button primary' }, submitLabel);
  const form = h('form', { class: 'ws-form', 'aria-label': label, novalidate: true }, fields, h('div', { class: 'actions' }, button, extra), status);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    replaceChildren(status);
    button.disabled = true;
    try {
      const out = await send(form);
      await onDone?.(out, form);
    } catch (err) {
      showErrors(form, status, err);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

export function clearErrors(form) {
  for (const el of form.querySelectorAll('[aria-invalid="true"]')) el.removeAttribute('aria-invalid');
  for (const p of form.querySelectorAll('.field-error')) {
    p.hidden = true;
    p.textContent = '';
  }
}

/** 422 issues go to the field named by the last string of their `loc`; what no field claims goes to `status`. */
export function showErrors(form, status, err) {
  if (!(err instanceof ApiError) || !Array.isArray(err.detail)) {
    replaceChildren(status, errorAlert(err));
    return;
  }
  const unplaced = [];
  let first = null;
  for (const issue of err.detail) {
    // `data-field` is the dotted path under the body ("security.token"); the longest path with a control wins, so
    // a problem inside a nested object lands on its own field, else on the field holding the object.
    const names = (issue.loc ?? []).slice(['body', 'query', 'path'].includes(issue.loc?.[0]) ? 1 : 0).map(String);
    const paths = names.map((_, i) => names.slice(0, names.length - i).join('.'));
    // Several sources may feed one API field (file or pasted text): the visible control takes the message.
    const control = paths.flatMap((n) => [...form.querySelectorAll(`[data-field="${CSS.escape(n)}"]`)]).find((c) => !c.closest('[hidden]'));
    if (!control) {
      unplaced.push(issue);
      continue;
    }
    control.setAttribute('aria-invalid', 'true');
    const p = form.querySelector(`#${CSS.escape(control.id)}-error`);
    if (p) {
      p.textContent = issue.msg;
      p.hidden = false;
      control.setAttribute('aria-describedby', [control.getAttribute('aria-describedby'), p.id].filter(Boolean).join(' '));
    }
    first ??= control;
  }
  if (unplaced.length) replaceChildren(status, errorAlert(new ApiError(422, unplaced)));
  if (first) first.focus();
  announce('The form has errors');
}

/** POSTs a multipart form (files) with the session's key; same errors as api(). */
export async function upload(url, formData, { signal } = {}) {
  const res = await fetch(url, { method: 'POST', headers: { accept: 'application/json', 'x-api-key': session.key ?? '' }, body: formData, signal, cache: 'no-store' });
  const json = await readBody(res);
  if (!res.ok) throw new ApiError(res.status, json && typeof json === 'object' ? json.detail : null);
  return json;
}

/** Parses a JSON textarea, reporting a syntax error as a 422 on that field so it shows like the API's. */
export function jsonValue(control, name, fallback) {
  const text = control.value.trim();
  if (!text) return fallback;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(422, [{ loc: ['body', name], msg: `Invalid JSON: ${e.message}` }]);
  }
}

/** Page heading with an optional lead and actions. */
export function pageHead(title, { lead, actions } = {}) {
  return [h('div', { class: 'page-head' }, h('h1', {}, title), actions ? h('div', { class: 'actions' }, actions) : null), lead ? h('p', { class: 'lead' }, lead) : null];
}

export function panel(id, title, ...children) {
  return h('section', { class: 'panel', 'aria-labelledby': id }, h('h2', { id }, title), children);
}

/** A "New …" disclosure around a create form: lists stay the first thing on the page. */
export function createDisclosure(summary, form, { open = false } = {}) {
  return h('details', { class: 'ws-create', open }, h('summary', { class: 'button secondary' }, summary), form);
}
