import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, lazyDetails, liveUpdate, loading, pager, statusBadge, timeEl } from '../components.js';
import { describeAuthor, describeOutcome, describeTiming } from '../schedule-format.js';
import { shortId, truncate } from '../format.js';
import { taskTable } from './task-table.js';

/**
 * An agent's schedules (docs/schedules.md): when each fires, its next and last run, who made it, and on demand the
 * tasks it started. `refresh` re-reads the current page (the agent page polls it).
 */
export function schedulesPanel(ctx, agent) {
  const body = h('div', {}, loading('Loading schedules…'));
  const section = h('section', { class: 'panel', 'aria-labelledby': 'schedules-title' }, h('h2', { id: 'schedules-title' }, 'Schedules'), body);
  let page = 1;

  async function refresh() {
    try {
      const data = await api('GET', `${path`/v1/agents/${agent.id}/schedules`}${query({ page, per_page: 10 })}`, { signal: ctx.signal });
      liveUpdate(body, data, () => [scheduleTable(ctx, agent, data), pager(data, (p) => ((page = p), void refresh()), 'Schedules pages')]);
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
      throw e;
    }
  }
  return { section, refresh };
}

function scheduleTable(ctx, agent, data) {
  return dataTable({
    caption: `Schedules of ${agent.name}`,
    empty: 'No schedules.',
    columns: [
      { label: 'Schedule', cell: (s) => h('div', { class: 'task-cell' }, h('span', {}, s.name || shortId(s.id, 13)), h('span', { class: 'task-input' }, truncate(s.invocation?.input?.text ?? '', 90))) },
      { label: 'When', cell: (s) => describeTiming(s) },
      { label: 'Status', cell: (s) => statusBadge(s.status) },
      { label: 'Next run', cell: (s) => timeEl(s.next_run_at) },
      { label: 'Last run', cell: (s) => [timeEl(s.last_run_at), s.last_outcome ? h('span', { class: 'task-input' }, ` ${describeOutcome(s.last_outcome)}`) : null] },
      { label: 'Made by', cell: (s) => (s.created_by?.task_id ? h('a', { href: `#${path`/tasks/${s.created_by.task_id}`}` }, describeAuthor(s.created_by)) : describeAuthor(s.created_by)) },
      { label: 'Tasks', cell: (s) => scheduleTasks(ctx, agent, s) },
    ],
    rows: data.items.map((s) => ({ key: s.id, value: s })),
  });
}

/** The schedule's tasks, fetched the first time its disclosure is opened. */
function scheduleTasks(ctx, agent, s) {
  return lazyDetails(`${s.run_count} run${s.run_count === 1 ? '' : 's'}${s.skipped_count ? `, ${s.skipped_count} skipped` : ''}`, async () => {
    const page = await api('GET', `${path`/v1/agents/${agent.id}/schedules/${s.id}/tasks`}${query({ per_page: 10 })}`, { signal: ctx.signal });
    return taskTable(page.items, { caption: `Tasks of schedule ${s.name || s.id}`, showAgent: false, empty: 'No tasks yet.' });
  });
}
