import { announce, copyText, h, replaceChildren } from './dom.js';
import { formatTime, prettyJson } from './format.js';

/** Building blocks shared by the views. Every one returns DOM built with h(): no markup from data. */

export function statusBadge(status) {
  const s = String(status ?? 'unknown');
  return h('span', { class: `badge status-${s.toLowerCase().replace(/[^a-z_]/g, '')}` }, s);
}

export function timeEl(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, formatTime(iso));
}

/** A labelled list of facts: [[label, value], ...]; null values show a dash. */
export function facts(pairs, { className = 'facts' } = {}) {
  return h(
    'dl',
    { class: className },
    pairs
      .filter((p) => p)
      .map(([label, value]) => h('div', { class: 'fact' }, h('dt', {}, label), h('dd', {}, value === null || value === undefined || value === '' ? h('span', { class: 'muted' }, '—') : value))),
  );
}

/** Formatted JSON in a focusable, scrollable region (keyboard users can scroll it). */
export function jsonBlock(value, label) {
  return h('pre', { class: 'json', tabindex: '0', 'aria-label': label ?? 'JSON' }, h('code', {}, prettyJson(value)));
}

/** A collapsible section that shows JSON: keeps long payloads out of the way until asked for. */
export function jsonDetails(summary, value) {
  return h('details', { class: 'json-details' }, h('summary', {}, summary), jsonBlock(value, summary));
}

/**
 * A disclosure whose content is fetched the first time it is opened (`load` returns the node to show); a failed
 * load shows the error and is tried again on the next opening.
 */
export function lazyDetails(summary, load) {
  const slot = h('div', {});
  const details = h(
    'details',
    {
      class: 'json-details',
      ontoggle: async () => {
        if (!details.open || slot.dataset.loaded) return;
        slot.dataset.loaded = '1';
        replaceChildren(slot, loading());
        try {
          replaceChildren(slot, await load());
        } catch (e) {
          delete slot.dataset.loaded;
          replaceChildren(slot, errorAlert(e));
        }
      },
    },
    h('summary', {}, summary),
    slot,
  );
  return details;
}

export function loading(text = 'Loading…') {
  return h('p', { class: 'loading', role: 'status' }, text);
}

export function errorAlert(error) {
  return h('div', { class: 'alert error', role: 'alert' }, error?.message ?? String(error));
}

/** A read-only value with a copy button (webhook URLs). */
export function copyField({ id, label, value, hint }) {
  const input = h('input', { id, type: 'text', readonly: true, value, class: 'mono', spellcheck: 'false', 'aria-describedby': hint ? `${id}-hint` : null });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'button secondary',
      'aria-label': `Copy ${label}`,
      onclick: async () => {
        const ok = await copyText(input.value);
        button.textContent = ok ? 'Copied' : 'Copy failed';
        announce(ok ? `${label} copied to the clipboard` : `Could not copy ${label}; select the text and copy it`);
        setTimeout(() => (button.textContent = 'Copy'), 2000);
      },
    },
    'Copy',
  );
  return h(
    'div',
    { class: 'copy-field' },
    h('label', { for: id }, label),
    h('div', { class: 'copy-row' }, input, button),
    hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null,
  );
}

/** Previous/next paging for {page, total_pages, total}; `go(page)` navigates. */
export function pager(page, go, label = 'Pagination') {
  if (!page || page.total_pages <= 1) return h('p', { class: 'muted pager-summary' }, `${page?.total ?? 0} in total`);
  const prev = page.page > 1;
  const next = page.page < page.total_pages;
  return h(
    'nav',
    { class: 'pager', 'aria-label': label },
    h('button', { type: 'button', class: 'button secondary', disabled: !prev, onclick: () => go(page.page - 1) }, 'Previous'),
    h('span', { class: 'pager-summary' }, `Page ${page.page} of ${page.total_pages} · ${page.total} in total`),
    h('button', { type: 'button', class: 'button secondary', disabled: !next, onclick: () => go(page.page + 1) }, 'Next'),
  );
}

/** A table with a caption (screen readers announce it) and column headers with scope. */
export function dataTable({ caption, columns, rows, empty = 'Nothing here yet.', captionHidden = true, stack = false }) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      // `stack`: on a phone each row becomes a card whose cells say their column (workspace.css).
      { class: stack ? 'data stack' : 'data' },
      h('caption', { class: captionHidden ? 'sr-only' : null }, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.className ?? null }, c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', { dataset: { key: r.key ?? '' } }, columns.map((c) => h('td', { class: c.className ?? null, 'data-label': stack ? c.label : null }, c.cell(r.value)))))),
    ),
  );
}

/**
 * Calls fn every `ms` while the page is visible, until the signal aborts. A failing call is retried at the next
 * tick (the caller shows its own error).
 */
export function poll(fn, ms, signal) {
  let timer = null;
  const tick = async () => {
    if (signal.aborted) return;
    if (document.visibilityState === 'visible') {
      try {
        await fn();
      } catch {
        // shown by fn; keep polling
      }
    }
    if (!signal.aborted) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  signal.addEventListener('abort', () => clearTimeout(timer));
}

/**
 * Replaces `container`'s content with `build()` only when `data` changed since the last call, and keeps keyboard
 * focus on the same link or button (matched by data-key + text) across the update. Live lists stay usable.
 */
export function liveUpdate(container, data, build) {
  const json = JSON.stringify(data);
  if (container.dataset.rendered === json) return false;
  container.dataset.rendered = json;
  const active = document.activeElement;
  const hadFocus = active && container.contains(active);
  const rowKey = hadFocus ? active.closest('[data-key]')?.dataset.key : null;
  const activeText = hadFocus ? active.textContent : null;
  replaceChildren(container, build());
  if (hadFocus) {
    const candidates = rowKey ? container.querySelectorAll(`[data-key="${CSS.escape(rowKey)}"] a, [data-key="${CSS.escape(rowKey)}"] button`) : container.querySelectorAll('a, button');
    const same = [...candidates].find((el) => el.textContent === activeText) ?? candidates[0];
    if (same) same.focus();
  }
  return true;
}
