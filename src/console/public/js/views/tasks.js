import { api, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { errorAlert, liveUpdate, loading, pager, poll } from '../components.js';
import { dateInputToIso, TASK_SOURCES, TASK_STATUSES } from '../format.js';
import { taskTable, taskTableState } from './task-table.js';
import { activityPanel } from './activity-chart.js';

/** The server searches this many of the newest tasks that pass the other filters (src/tasks/task-text-search.ts). */
const SEARCH_WINDOW = 5000;

const POLL_MS = 3000;
const PER_PAGE = 20;
/** Agents offered in the filter: the first pages only; an organization with more can still filter by link. */
const MAX_AGENT_PAGES = 4;

/** Every task of the organization, filtered by agent, status, source and date, newest first, kept fresh. */
export async function renderTasks(root, ctx) {
  ctx.setTitle('Tasks');
  const p = ctx.params;
  const filters = {
    agent_id: p.get('agent_id') ?? '',
    status: p.get('status') ?? '',
    source: p.get('source') ?? '',
    from: p.get('from') ?? '',
    to: p.get('to') ?? '',
    q: p.get('q') ?? '',
  };
  const page = Math.max(1, Number(p.get('page')) || 1);
  const live = p.get('live') !== '0';

  const agents = await loadAgents(ctx.signal);
  const agentNames = new Map(agents.map((a) => [a.id, a.name]));
  if (filters.agent_id && !agentNames.has(filters.agent_id)) agents.push({ id: filters.agent_id, name: filters.agent_id });

  const field = (id, label, control) => h('div', { class: 'field' }, h('label', { for: id }, label), control);
  const select = (id, value, options) =>
    h(
      'select',
      { id, name: id },
      options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)),
    );
  const liveBox = h('input', { type: 'checkbox', id: 'f-live', checked: live });
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter tasks',
      onsubmit: (e) => {
        e.preventDefault();
        ctx.navigate(`#/tasks${query(readForm())}`);
      },
    },
    h(
      'div',
      { class: 'field search-field' },
      h('label', { for: 'f-q' }, 'Search inputs and results'),
      h('div', { class: 'search-row' }, h('input', { type: 'search', id: 'f-q', name: 'q', value: filters.q, maxlength: 200, placeholder: 'Words from the request or the answer' })),
    ),
    field('f-agent', 'Agent', select('f-agent', filters.agent_id, [['', 'All agents'], ...agents.map((a) => [a.id, a.name])])),
    field('f-status', 'Status', select('f-status', filters.status, [['', 'Any status'], ...TASK_STATUSES.map((s) => [s, s])])),
    field('f-source', 'Source', select('f-source', filters.source, [['', 'Any source'], ...TASK_SOURCES.map((s) => [s, s])])),
    field('f-from', 'Created from', h('input', { type: 'date', id: 'f-from', name: 'from', value: filters.from })),
    field('f-to', 'Created until', h('input', { type: 'date', id: 'f-to', name: 'to', value: filters.to })),
    h(
      'div',
      { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'button primary' }, 'Apply filters'),
      h('a', { href: '#/tasks', class: 'button secondary', onclick: (e) => (e.preventDefault(), ctx.navigate('#/tasks')) }, 'Reset'),
    ),
  );
  function readForm() {
    return {
      agent_id: form.querySelector('#f-agent').value,
      status: form.querySelector('#f-status').value,
      source: form.querySelector('#f-source').value,
      from: form.querySelector('#f-from').value,
      to: form.querySelector('#f-to').value,
      q: form.querySelector('#f-q').value.trim(),
      live: liveBox.checked ? undefined : '0',
    };
  }

  const results = h('div', { id: 'task-results' }, loading('Loading tasks…'));
  const pagerSlot = h('div', {});
  // The chart of tasks and failures per day, for the agent the list is filtered by.
  const activity = filters.agent_id ? activityPanel(ctx, filters.agent_id, { title: `Activity of ${agentNames.get(filters.agent_id) ?? 'this agent'}` }) : null;
  replaceChildren(root, 
    h('div', { class: 'page-head' }, h('h1', {}, 'Tasks'), h('div', { class: 'field inline' }, liveBox, h('label', { for: 'f-live' }, 'Refresh automatically'))),
    form,
    activity?.section,
    h('section', { 'aria-labelledby': 'results-title', class: 'panel' }, h('h2', { id: 'results-title', class: 'sr-only' }, 'Results'), results, pagerSlot),
  );

  const apiQuery = query({
    agent_id: filters.agent_id,
    status: filters.status,
    source: filters.source,
    from_date: dateInputToIso(filters.from),
    to_date: dateInputToIso(filters.to, { endOfDay: true }),
    q: filters.q,
    page,
    per_page: PER_PAGE,
  });
  async function refresh() {
    try {
      const data = await api('GET', `/v1/tasks${apiQuery}`, { signal: ctx.signal });
      liveUpdate(results, taskTableState(data.items), () => taskTable(data.items, { agentNames, empty: filters.q ? `No task among the newest ${SEARCH_WINDOW.toLocaleString('en')} matching the other filters contains “${filters.q}”. Narrow by agent or dates to search older tasks.` : undefined }));
      liveUpdate(pagerSlot, [data.page, data.total, data.total_pages], () =>
        pager(data, (n) => ctx.navigate(`#/tasks${query({ ...readForm(), page: n })}`), 'Task pages'),
      );
    } catch (e) {
      if (ctx.signal.aborted) return;
      delete results.dataset.rendered;
      replaceChildren(results, errorAlert(e));
      throw e;
    }
  }
  await Promise.all([refresh().catch(() => {}), activity?.refresh()]);
  // The checkbox applies at once and is kept in the address, so a reload keeps the choice.
  let liveCtl = null;
  const startLive = () => {
    liveCtl = new AbortController();
    ctx.signal.addEventListener('abort', () => liveCtl.abort(), { once: true });
    poll(refresh, POLL_MS, liveCtl.signal);
  };
  if (live) startLive();
  liveBox.addEventListener('change', () => {
    history.replaceState(null, '', `#/tasks${query({ ...filters, page: page > 1 ? page : undefined, live: liveBox.checked ? undefined : '0' })}`);
    liveCtl?.abort();
    if (liveBox.checked) {
      void refresh().catch(() => {});
      startLive();
    }
  });
}

async function loadAgents(signal) {
  const all = [];
  for (let page = 1; page <= MAX_AGENT_PAGES; page++) {
    const data = await api('GET', `/v1/agents${query({ page, per_page: 50 })}`, { signal });
    all.push(...data.items);
    if (page >= data.total_pages) break;
  }
  return all;
}
