import { path } from '../api.js';
import { h } from '../dom.js';
import { dataTable, statusBadge, timeEl } from '../components.js';
import { durationBetween, formatDuration, formatNumber, shortId, truncate } from '../format.js';

/** The tasks table of the tasks page and the agent page. `agentNames` maps agent ids to names when known. */
/**
 * What a live table's content depends on: the tasks, plus the clock while one runs (its duration grows), so that
 * liveUpdate re-renders a table with running tasks at every refresh and leaves a settled one alone.
 */
export function taskTableState(tasks) {
  return [tasks, tasks.some((t) => t.started_at && !t.finished_at) ? Date.now() : 0];
}

function firstWords(text) {
  return String(text ?? '').replace(/\s+/g, ' ').trim();
}

export function taskTable(tasks, { caption = 'Tasks', agentNames = null, showAgent = true, empty } = {}) {
  const columns = [
    {
      label: 'Task',
      cell: (t) =>
        h(
          'div',
          { class: 'task-cell' },
          // Led by what was asked: the first words of the input name the task; the id is the detail under it.
          h('a', { href: `#${path`/tasks/${t.id}`}`, class: 'task-lead', title: t.id }, truncate(firstWords(t.title || t.input?.text), 90) || 'Task without text input'),
          h('span', { class: 'mono task-lead-id' }, shortId(t.id, 13)),
        ),
    },
    showAgent && {
      label: 'Agent',
      cell: (t) => h('a', { href: `#${path`/agents/${t.agent_id}`}` }, agentNames?.get(t.agent_id) ?? shortId(t.agent_id)),
    },
    { label: 'Status', cell: (t) => statusBadge(t.status) },
    { label: 'Source', cell: (t) => t.source },
    { label: 'Created', cell: (t) => timeEl(t.created_at) },
    {
      label: 'Duration',
      className: 'num',
      cell: (t) => (t.started_at ? `${formatDuration(durationBetween(t.started_at, t.finished_at))}${t.finished_at ? '' : ' so far'}` : '—'),
    },
    { label: 'Tokens', className: 'num', cell: (t) => formatNumber(t.tokens?.total_tokens ?? 0) },
  ].filter(Boolean);
  return dataTable({ caption, columns, rows: tasks.map((t) => ({ key: t.id, value: t })), empty: empty ?? 'No tasks match.', stack: true });
}
