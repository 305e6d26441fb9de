/**
 * Building DOM without innerHTML: text always becomes text nodes, so nothing the API returns can turn into
 * markup. The one exception is `safeHtml`, reserved for the markdown renderer's escaped output.
 */

/**
 * h('a', {href: '#/x', class: 'link', onclick: fn}, 'text', child, [more])
 * Attributes: `class`, `for`, `on<event>` (function), `dataset` (object), booleans (true adds, false/null skips),
 * `safeHtml` (string from markdown.js only).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'safeHtml') el.innerHTML = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value' && 'value' in el) el.value = value;
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces every child of `el`. */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Announces a message to screen readers through the polite live region. */
export function announce(message) {
  const region = document.getElementById('announcer');
  if (!region) return;
  // Clearing first makes repeated identical messages ("Copied") be read again.
  region.textContent = '';
  setTimeout(() => (region.textContent = message), 30);
}

/** Moves focus to a view's heading after navigation, so keyboard and screen-reader users start there. */
export function focusHeading(root) {
  const heading = root.querySelector('h1');
  if (!heading) return;
  heading.setAttribute('tabindex', '-1');
  heading.focus({ preventScroll: false });
}

/**
 * Asks for confirmation in the page's modal <dialog> (focus is trapped and Escape cancels natively).
 * Resolves true when confirmed.
 */
export function confirmAction({ title, text, confirmLabel }) {
  const dialog = document.getElementById('confirm-dialog');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = confirmLabel;
  const opener = document.activeElement;
  return new Promise((resolve) => {
    dialog.returnValue = '';
    dialog.addEventListener(
      'close',
      () => {
        if (opener && opener.isConnected) opener.focus();
        resolve(dialog.returnValue === 'confirm');
      },
      { once: true },
    );
    dialog.showModal();
    document.getElementById('confirm-cancel').focus();
  });
}

/** Copies text; falls back to a hidden textarea where the Clipboard API is unavailable (plain-http hosts). */
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the legacy path
  }
  const ta = h('textarea', { readonly: true, class: 'offscreen', 'aria-hidden': 'true' });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}
