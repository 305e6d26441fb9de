import { api, path } from '../api.js';
import { announce, h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, loading, statusBadge, timeEl } from '../components.js';

/**
 * The task's notification deliveries (GET /v1/tasks/{id}/notifications): where each went, its state, every attempt,
 * and a re-send button once it is no longer pending. `section` keeps its heading; the rest is replaced.
 */
export async function renderTaskNotifications(section, ctx, taskId) {
  const heading = section.querySelector('h2');
  if (!section.querySelector('.notifications-body')) replaceChildren(section, heading, h('div', { class: 'notifications-body' }, loading('Loading notifications…')));
  const body = section.querySelector('.notifications-body');
  let deliveries;
  try {
    deliveries = await api('GET', path`/v1/tasks/${taskId}/notifications`, { signal: ctx.signal });
  } catch (e) {
    if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
    return;
  }
  const resend = (d) => async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      await api('POST', path`/v1/tasks/${taskId}/notifications/${d.id}/resend`, { signal: ctx.signal });
      announce(`The ${d.channel} notification will be sent again.`);
      await renderTaskNotifications(section, ctx, taskId);
    } catch (e) {
      button.disabled = false;
      body.append(errorAlert(e));
    }
  };
  replaceChildren(
    body,
    dataTable({
      caption: 'Notifications of this task',
      empty: 'No notifications: the agent has none set for this outcome, and the call gave no callback_url.',
      columns: [
        { label: 'Channel', cell: (d) => d.channel },
        { label: 'Target', cell: (d) => h('span', { class: 'mono' }, d.target) },
        { label: 'Status', cell: (d) => statusBadge(d.status) },
        { label: 'Attempts', cell: (d) => attempts(d) },
        { label: 'Delivered', cell: (d) => timeEl(d.delivered_at) },
        { label: 'Last error', cell: (d) => (d.last_error ? h('span', { class: 'prewrap' }, d.last_error) : h('span', { class: 'muted' }, '—')) },
        {
          label: 'Actions',
          cell: (d) =>
            d.status === 'pending'
              ? h('span', { class: 'muted' }, 'next try ', timeEl(d.next_attempt_at))
              : h('button', { type: 'button', class: 'button secondary small', 'aria-label': `Send the ${d.channel} notification again`, onclick: resend(d) }, 'Send again'),
        },
      ],
      rows: deliveries.map((d) => ({ key: d.id, value: d })),
    }),
  );
  // Deliveries still on their way are looked at again until they settle (or the page is left).
  if (deliveries.some((d) => d.status === 'pending')) {
    const timer = setTimeout(() => void renderTaskNotifications(section, ctx, taskId), REFRESH_MS);
    ctx.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }
}

const REFRESH_MS = 2000;

/** The count, with each attempt (time, outcome, HTTP status, latency, error) behind a disclosure. */
function attempts(d) {
  if (!d.attempt_log.length) return String(d.attempts);
  return h(
    'details',
    { class: 'json-details' },
    h('summary', {}, String(d.attempts)),
    h(
      'ol',
      { class: 'plain' },
      d.attempt_log.map((a) =>
        h('li', {}, timeEl(a.started_at), ` ${a.outcome}`, a.status_code === null ? '' : ` (HTTP ${a.status_code})`, ` in ${a.latency_ms} ms`, a.error ? h('span', { class: 'muted' }, ` — ${a.error}`) : null),
      ),
    ),
  );
}
