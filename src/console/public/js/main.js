import { session, setUnauthorizedHandler } from './api.js';
import { focusHeading, replaceChildren } from './dom.js';
import { renderSignIn } from './views/signin.js';
import { renderAgents } from './views/agents.js';
import { renderAgent } from './views/agent.js';
import { renderTasks } from './views/tasks.js';
import { renderTask } from './views/task.js';
import { renderAgentEditor } from './views/agent-editor.js';
import { renderPlayground } from './views/playground.js';
import { workspaceRoutes } from './views/workspace-routes.js';

/**
 * A hash router: every page has an address (#/tasks/<id>) that survives reloads and can be shared, and the
 * server needs to know only `GET /`. Each view gets an AbortSignal that ends its requests, polls and streams
 * when the user navigates away.
 */
const routes = [
  { pattern: /^\/signin$/, view: renderSignIn, nav: null, public: true },
  { pattern: /^\/agents$/, view: renderAgents, nav: 'agents' },
  { pattern: /^\/agents\/new$/, view: (root, ctx) => renderAgentEditor(root, ctx), nav: 'agents' },
  { pattern: /^\/agents\/([^/]+)$/, view: renderAgent, nav: 'agents' },
  { pattern: /^\/agents\/([^/]+)\/edit$/, view: renderAgentEditor, nav: 'agents' },
  { pattern: /^\/agents\/([^/]+)\/playground$/, view: renderPlayground, nav: 'agents' },
  { pattern: /^\/tasks$/, view: renderTasks, nav: 'tasks' },
  { pattern: /^\/tasks\/([^/]+)$/, view: renderTask, nav: 'tasks' },
  ...workspaceRoutes,
];

const main = document.getElementById('main');
let current = null;
let renderedHash = null;

/** '#/tasks/abc?x=1' -> { path: '/tasks/abc', params: URLSearchParams } */
export function parseHash(hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  return { path: q === -1 ? raw : raw.slice(0, q), params: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)) };
}

export function navigate(hash, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', hash);
  else if (location.hash !== hash) history.pushState(null, '', hash);
  void render();
}

/** Hash links fire both popstate and hashchange; a page renders once per address unless forced. */
function onAddressChange() {
  if (location.hash !== renderedHash) void render();
}

async function render() {
  renderedHash = location.hash;
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const { path, params } = parseHash(location.hash);
  const signedIn = !!session.key;
  if (!signedIn && path !== '/signin') {
    const back = location.hash && location.hash !== '#/signin' ? location.hash : '';
    return navigate(`#/signin${back ? `?next=${encodeURIComponent(back)}` : ''}`, { replace: true });
  }
  const route = routes.find((r) => r.pattern.test(path));
  if (!route) return navigate('#/agents', { replace: true });
  if (route.public && signedIn) return navigate('#/agents', { replace: true });
  const match = route.pattern.exec(path);
  const args = match.slice(1).map((s) => decodeURIComponent(s));
  updateChrome(route.nav, signedIn);
  replaceChildren(main);
  const ctx = {
    signal: controller.signal,
    params,
    navigate,
    setTitle: (t) => (document.title = t ? `${t} · Agentry console` : 'Agentry console'),
  };
  let focusTarget = null;
  try {
    focusTarget = await route.view(main, ctx, ...args);
  } catch (e) {
    if (controller.signal.aborted || e?.name === 'AbortError') return;
    replaceChildren(main, errorPanel(e));
  }
  if (controller.signal.aborted) return;
  // Start keyboard and screen-reader users at the new page: its heading, or the field a view asks for.
  if (focusTarget instanceof HTMLElement) focusTarget.focus();
  else focusHeading(main);
}

function errorPanel(e) {
  const p = document.createElement('div');
  p.className = 'panel error-panel';
  p.setAttribute('role', 'alert');
  const h = document.createElement('h1');
  h.textContent = e?.status === 404 ? 'Not found' : 'Something went wrong';
  const msg = document.createElement('p');
  msg.textContent = e?.message ?? String(e);
  p.append(h, msg);
  return p;
}

function updateChrome(nav, signedIn) {
  document.getElementById('primary-nav').hidden = !signedIn;
  document.getElementById('sign-out').hidden = !signedIn;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function signOut() {
  session.signOut();
  navigate('#/signin');
}

document.getElementById('sign-out').addEventListener('click', signOut);
// "#main" would be taken for a route: the skip link moves focus itself and leaves the address alone.
document.querySelector('.skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
setUnauthorizedHandler(() => {
  if (!session.key) return;
  session.signOut();
  navigate(`#/signin?expired=1&next=${encodeURIComponent(location.hash)}`, { replace: true });
});
window.addEventListener('popstate', onAddressChange);
window.addEventListener('hashchange', onAddressChange);
void render();
