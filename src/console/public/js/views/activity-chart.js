import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, loading } from '../components.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 640;
const H = 180;
const PAD = { top: 12, right: 8, bottom: 24, left: 34 };

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/**
 * Tasks and failures per day of one agent, as plain SVG (no library, nothing inline the CSP would block: colours
 * come from classes). The same numbers are in a table for screen readers and for reading exact values.
 */
export function activityChart(buckets) {
  const max = Math.max(1, ...buckets.map((b) => b.tasks));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const step = innerW / buckets.length;
  const barW = Math.max(1, step * 0.7);
  const y = (v) => PAD.top + innerH - (v / max) * innerH;
  const totals = buckets.reduce((a, b) => ({ tasks: a.tasks + b.tasks, failed: a.failed + b.failed }), { tasks: 0, failed: 0 });
  const label = `${totals.tasks} tasks, ${totals.failed} failed, over ${buckets.length} days from ${buckets[0]?.date} to ${buckets.at(-1)?.date}`;
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label },
    s('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: PAD.top + innerH, y2: PAD.top + innerH }),
    s('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: PAD.top, y2: PAD.top }),
    s('text', { x: PAD.left - 4, y: PAD.top + 4, 'text-anchor': 'end' }, String(max)),
    s('text', { x: PAD.left - 4, y: PAD.top + innerH, 'text-anchor': 'end' }, '0'),
  );
  buckets.forEach((b, i) => {
    const x = PAD.left + i * step + (step - barW) / 2;
    const title = s('title', {}, `${b.date}: ${b.tasks} tasks, ${b.failed} failed`);
    if (b.tasks) svg.append(s('rect', { class: 'bar-total', x, y: y(b.tasks), width: barW, height: y(0) - y(b.tasks) }, title));
    if (b.failed) svg.append(s('rect', { class: 'bar-failed', x, y: y(b.failed), width: barW, height: y(0) - y(b.failed) }, s('title', {}, `${b.date}: ${b.failed} failed`)));
  });
  // First, middle and last dates: enough to read the axis on a phone without labels colliding.
  const marks = [...new Set([0, Math.floor((buckets.length - 1) / 2), buckets.length - 1])];
  for (const i of marks) {
    const anchor = i === 0 ? 'start' : i === buckets.length - 1 ? 'end' : 'middle';
    const x = i === 0 ? PAD.left : i === buckets.length - 1 ? W - PAD.right : PAD.left + i * step + step / 2;
    svg.append(s('text', { x, y: H - 6, 'text-anchor': anchor }, buckets[i].date.slice(5)));
  }
  return h(
    'figure',
    { class: 'chart-figure' },
    svg,
    h('ul', { class: 'chart-legend', 'aria-hidden': 'true' }, h('li', {}, h('span', { class: 'swatch total' }), 'Tasks'), h('li', {}, h('span', { class: 'swatch failed' }), 'Failed')),
    h('figcaption', { class: 'muted' }, label),
    h(
      'details',
      { class: 'json-details' },
      h('summary', {}, 'Show the numbers'),
      dataTable({
        caption: 'Tasks and failures per day',
        columns: [
          { label: 'Day', cell: (b) => b.date },
          { label: 'Tasks', className: 'num', cell: (b) => String(b.tasks) },
          { label: 'Failed', className: 'num', cell: (b) => String(b.failed) },
        ],
        rows: buckets.map((b) => ({ key: b.date, value: b })),
      }),
    ),
  );
}

/** A panel with the chart of one agent and a choice of period; `refresh()` reloads it. */
export function activityPanel(ctx, agentId, { title = 'Activity', days = 14 } = {}) {
  const body = h('div', {}, loading('Loading activity…'));
  const period = h('select', { id: `activity-days-${agentId}` }, [7, 14, 30, 90].map((n) => h('option', { value: String(n), selected: n === days }, `${n} days`)));
  const id = `activity-title-${agentId}`;
  const section = h(
    'section',
    { class: 'panel', 'aria-labelledby': id },
    h('div', { class: 'section-head' }, h('h2', { id }, title), h('div', { class: 'field inline' }, h('label', { for: period.id }, 'Period'), period)),
    body,
  );
  let last = '';
  async function refresh() {
    try {
      const data = await api('GET', `${path`/v1/agents/${agentId}/tasks/activity`}${query({ days: period.value })}`, { signal: ctx.signal });
      const key = JSON.stringify(data.buckets);
      if (key === last) return;
      last = key;
      replaceChildren(body, activityChart(data.buckets));
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
    }
  }
  period.addEventListener('change', () => void refresh());
  return { section, refresh };
}
