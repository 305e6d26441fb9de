import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, liveUpdate, loading, pager, poll, statusBadge, timeEl } from '../components.js';
import { describeOutcome, describeTiming } from '../schedule-format.js';
import { shortId, truncate } from '../format.js';

const POLL_MS = 5000;

/**
 * Every schedule of the organization across agents (docs/schedules.md), next run first in mind. An agent's own
 * schedules, with the tasks each started, are on the agent page; each task's notification deliveries on its page.
 */
export async function renderSchedules(root, ctx) {
  ctx.setTitle('Schedules');
  const page = Math.max(1, Number(ctx.params.get('page')) || 1);
  const body = h('div', {}, loading('Loading schedules…'));
  replaceChildren(
    root,
    h('div', { class: 'page-head' }, h('h1', {}, 'Schedules')),
    h('p', { class: 'lead' }, 'Runs agents start on a timer. Open an agent for its schedules’ tasks; a task’s page shows its notification deliveries.'),
    h('section', { class: 'panel', 'aria-labelledby': 'all-schedules' }, h('h2', { id: 'all-schedules', class: 'sr-only' }, 'All schedules'), body),
  );
  const agentNames = new Map();
  async function refresh() {
    const data = await api('GET', `/v1/schedules${query({ page, per_page: 20 })}`, { signal: ctx.signal });
    const unknown = [...new Set(data.items.map((s) => s.agent_id))].filter((id) => !agentNames.has(id));
    await Promise.all(unknown.map((id) => api('GET', path`/v1/agents/${id}`, { signal: ctx.signal }).then((a) => agentNames.set(id, a.name), () => agentNames.set(id, shortId(id)))));
    liveUpdate(body, data, () => [
      dataTable({
        caption: 'Schedules',
        empty: 'No schedule: agents get them from the API or create them during a run.',
        stack: true,
        columns: [
          { label: 'Schedule', cell: (s) => h('div', { class: 'task-cell' }, h('span', { class: 'task-lead' }, s.name || shortId(s.id, 13)), h('span', { class: 'task-input' }, truncate(s.invocation?.input?.text ?? '', 90))) },
          { label: 'Agent', cell: (s) => h('a', { href: `#${path`/agents/${s.agent_id}`}` }, agentNames.get(s.agent_id)) },
          { label: 'When', cell: (s) => describeTiming(s) },
          { label: 'Status', cell: (s) => statusBadge(s.status) },
          { label: 'Next run', cell: (s) => timeEl(s.next_run_at) },
          { label: 'Last run', cell: (s) => [timeEl(s.last_run_at), s.last_outcome ? h('span', { class: 'task-input' }, ` ${describeOutcome(s.last_outcome)}`) : null] },
        ],
        rows: data.items.map((s) => ({ key: s.id, value: s })),
      }),
      pager(data, (n) => ctx.navigate(`#/schedules${query({ page: n })}`), 'Schedule pages'),
    ]);
  }
  await refresh();
  poll(refresh, POLL_MS, ctx.signal);
}
