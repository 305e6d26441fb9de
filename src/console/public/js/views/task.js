import { api, path } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { errorAlert, facts, jsonBlock, loading, statusBadge, timeEl } from '../components.js';
import { durationBetween, formatBytes, formatDuration, formatTokens, isFinal, prettyJson, tryParseJson } from '../format.js';
import { renderMarkdown } from '../markdown.js';
import { followTask } from '../task-stream.js';
import { TimelineView } from './timeline-view.js';
import { renderTaskNotifications } from './task-notifications.js';

/**
 * One task: input, files, result, thread and the execution trace, all kept live over the task's event stream
 * while it runs. Lifecycle events carry the whole task, so the page updates without re-reading it.
 */
export async function renderTask(root, ctx, taskId) {
  ctx.setTitle(`Task ${taskId}`);
  root.append(loading('Loading task…'));
  let task = await api('GET', path`/v1/tasks/${taskId}`, { signal: ctx.signal });
  const agentName = await api('GET', path`/v1/agents/${task.agent_id}`, { signal: ctx.signal }).then(
    (a) => a.name,
    () => null, // a deleted agent's tasks stay readable
  );

  const taskLink = (id) => h('a', { href: `#${path`/tasks/${id}`}`, class: 'mono' }, id);
  const headBadges = h('div', { class: 'head-badges' });
  const stopSlot = h('div', { class: 'actions' });
  const summary = h('section', { class: 'panel', 'aria-labelledby': 'summary-title' });
  const hitl = h('div', {});
  const input = h('section', { class: 'panel', 'aria-labelledby': 'input-title' });
  const result = h('section', { class: 'panel', 'aria-labelledby': 'result-title' });
  const thread = h('section', { class: 'panel', 'aria-labelledby': 'thread-title' }, h('h2', { id: 'thread-title' }, 'Thread'), loading('Loading thread…'));
  const notifications = h('section', { class: 'panel', 'aria-labelledby': 'notifications-title' }, h('h2', { id: 'notifications-title' }, 'Notifications'));
  const timeline = new TimelineView({ taskLink });
  const streamState = h('p', { class: 'stream-state', role: 'status' });
  const trace = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'trace-title' },
    h('div', { class: 'section-head' }, h('h2', { id: 'trace-title' }, 'Execution trace'), streamState),
    timeline.element,
  );

  replaceChildren(root, 
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, 'Task ', h('span', { class: 'mono' }, taskId)),
      headBadges,
      stopSlot,
      // The conversation goes on in the agent's playground (a follow-up continues this task); not for a deleted agent.
      agentName !== null ? h('a', { href: `#${path`/agents/${task.agent_id}/playground`}?task=${encodeURIComponent(taskId)}`, class: 'button secondary' }, 'Continue in playground') : null,
    ),
    hitl,
    h('div', { class: 'grid-2' }, summary, input),
    result,
    notifications,
    trace,
    thread,
  );

  function update(next, { quiet = false } = {}) {
    const before = task.status;
    task = next;
    replaceChildren(headBadges, statusBadge(task.status), task.is_manually_stopped ? h('span', { class: 'badge' }, 'stopped by a person') : null);
    renderStop();
    renderSummary();
    renderHitl();
    renderInput();
    renderResult();
    if (before !== task.status && !quiet) {
      announce(`Task ${task.status}`);
      if (isFinal(task.status) || task.status === 'paused') void loadThread();
      if (isFinal(task.status)) void renderTaskNotifications(notifications, ctx, taskId);
    }
  }

  function renderStop() {
    if (isFinal(task.status)) return replaceChildren(stopSlot);
    if (stopSlot.querySelector('button')) return;
    const button = h(
      'button',
      {
        type: 'button',
        class: 'button danger',
        onclick: async () => {
          const ok = await confirmAction({ title: 'Stop this task?', text: 'A running task is aborted; its result so far is kept.', confirmLabel: 'Stop task' });
          if (!ok) return;
          button.disabled = true;
          try {
            update(await api('POST', path`/v1/tasks/${taskId}/stop`, { signal: ctx.signal }));
            // The button is gone; the page heading is the nearest stable place for keyboard focus.
            root.querySelector('h1')?.focus();
          } catch (e) {
            button.disabled = false;
            stopSlot.append(errorAlert(e));
          }
        },
      },
      'Stop task',
    );
    replaceChildren(stopSlot, button);
  }

  function renderSummary() {
    replaceChildren(summary, 
      h('h2', { id: 'summary-title' }, 'Summary'),
      facts([
        ['Agent', h('a', { href: `#${path`/agents/${task.agent_id}`}` }, agentName ?? task.agent_id)],
        ['Agent version', String(task.agent_version)],
        ['Source', task.source],
        ['Created', timeEl(task.created_at)],
        ['Started', timeEl(task.started_at)],
        ['Finished', timeEl(task.finished_at)],
        ['Duration', task.started_at ? h('span', { id: 'task-duration' }, durationText()) : null],
        ['Attempts', String(task.execution_attempts)],
        ['Model', [task.llm_model_provider, task.llm_model_name].filter(Boolean).join(' / ')],
        ['Tokens', formatTokens(task.tokens)],
        ['User', task.input?.user ? [task.input.user.email, task.input.user.id].filter(Boolean).join(' · ') || null : task.user_id],
        ['Parent task', task.parent_execution ? taskLink(task.parent_execution) : null],
        ['Sub-tasks', task.sub_executions?.length ? h('ul', { class: 'plain' }, task.sub_executions.map((id) => h('li', {}, taskLink(id)))) : null],
      ]),
    );
  }

  function durationText() {
    return formatDuration(durationBetween(task.started_at, task.finished_at)) + (task.finished_at ? '' : ' so far');
  }

  // A running task's duration counts up; the rest of the summary changes only with events.
  const ticker = setInterval(() => {
    const el = summary.querySelector('#task-duration');
    if (el && task.started_at && !task.finished_at) el.textContent = durationText();
  }, 1000);
  ctx.signal.addEventListener('abort', () => clearInterval(ticker), { once: true });

  function renderHitl() {
    if (task.status !== 'paused' || !task.hitl_request) return replaceChildren(hitl);
    const decide = (what) => async () => {
      try {
        update(await api('POST', path`/v1/tasks/${taskId}/${what}`, { signal: ctx.signal }));
      } catch (e) {
        hitl.append(errorAlert(e));
      }
    };
    replaceChildren(hitl, 
      h(
        'section',
        { class: 'panel attention', 'aria-labelledby': 'hitl-title' },
        h('h2', { id: 'hitl-title' }, 'Waiting for approval'),
        h('p', {}, `The agent wants to call ${task.hitl_request.tool}.`),
        jsonBlock(task.hitl_request.arguments, 'Arguments of the call waiting for approval'),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', class: 'button primary', onclick: decide('approve') }, 'Approve'),
          h('button', { type: 'button', class: 'button danger-outline', onclick: decide('reject') }, 'Reject'),
        ),
      ),
    );
  }

  function renderInput() {
    const files = task.input?.files ?? [];
    replaceChildren(input, 
      h('h2', { id: 'input-title' }, 'Input'),
      task.input?.text ? h('pre', { class: 'prewrap text-block', tabindex: '0', 'aria-label': 'Input text' }, task.input.text) : h('p', { class: 'muted' }, 'No text.'),
      task.additional_context ? [h('h3', {}, 'Additional context'), h('pre', { class: 'prewrap text-block', tabindex: '0' }, prettyJson(task.additional_context))] : null,
      h('h3', {}, 'Files'),
      files.length
        ? h(
            'ul',
            { class: 'files' },
            files.map((f) =>
              h(
                'li',
                {},
                h('a', { href: f.url, target: '_blank', rel: 'noopener noreferrer' }, f.name),
                ' ',
                h('span', { class: 'muted' }, `${f.mime_type}, ${formatBytes(f.size)}`),
                f.text ? h('details', { class: 'json-details' }, h('summary', {}, 'Extracted text'), h('pre', { class: 'prewrap text-block', tabindex: '0' }, f.text)) : null,
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'No files.'),
    );
  }

  let raw = false;
  function renderResult() {
    const text = task.result;
    const json = task.output_format === 'json' || tryParseJson(text).ok;
    const toggle =
      text && !json
        ? h('button', { type: 'button', class: 'button secondary small', 'aria-pressed': String(raw), onclick: () => ((raw = !raw), renderResult()) }, 'Show raw text')
        : null;
    let content;
    if (!text) content = h('p', { class: 'muted' }, isFinal(task.status) ? 'No result.' : 'The result appears when the task finishes.');
    else if (json) content = jsonBlock(tryParseJson(text).ok ? tryParseJson(text).value : text, 'Result (JSON)');
    else if (raw) content = h('pre', { class: 'prewrap text-block', tabindex: '0' }, text);
    else content = h('div', { class: 'markdown', safeHtml: renderMarkdown(text) });
    replaceChildren(result, h('div', { class: 'section-head' }, h('h2', { id: 'result-title' }, 'Result'), toggle), content);
  }

  async function loadThread() {
    try {
      const messages = await api('GET', path`/v1/tasks/${taskId}/thread`, { signal: ctx.signal });
      const list = Array.isArray(messages) ? messages : (messages?.items ?? messages?.messages ?? []);
      replaceChildren(thread, 
        thread.firstChild,
        list.length ? h('ol', { class: 'thread' }, list.map(message)) : h('p', { class: 'muted' }, 'No messages yet.'),
      );
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(thread, thread.firstChild, errorAlert(e));
    }
  }

  // The trace so far, read once: the stream replays it too, but those events are then skipped by their ids, so
  // only what happens from now on changes the page's state and is announced.
  const fetched = await api('GET', path`/v1/tasks/${taskId}/events`, { signal: ctx.signal }).catch((e) => (ctx.signal.aborted ? Promise.reject(e) : []));
  const initial = Array.isArray(fetched) ? fetched : [];
  let latest = null;
  for (const ev of initial) {
    const entry = timeline.add(ev);
    if (entry?.kind === 'lifecycle' && entry.task?.status) latest = entry.task;
  }
  update(latest ? merge(task, latest) : task, { quiet: true });
  void loadThread();
  void renderTaskNotifications(notifications, ctx, taskId);

  void followTask(taskId, {
    delivered: initial.length,
    signal: ctx.signal,
    isDone: () => isFinal(task.status),
    onState: (state, error) => {
      streamState.textContent = { live: isFinal(task.status) ? '' : 'Live', polling: 'Refreshing every few seconds', ended: '', error: error?.message ?? 'Stream failed' }[state];
      streamState.className = `stream-state ${state}`;
    },
    onEvent: (envelope) => {
      const entry = timeline.add(envelope);
      if (entry?.kind === 'lifecycle' && entry.task?.id === taskId && entry.task.status) {
        update(merge(task, entry.task));
        // Sub-executions are not part of the event's snapshot: the final state is read once from the API.
        if (isFinal(entry.task.status)) api('GET', path`/v1/tasks/${taskId}`, { signal: ctx.signal }).then((t) => update(t, { quiet: true }), () => {});
      }
    },
  });
}

/** A lifecycle event's task snapshot over the task we show (snapshots leave sub_executions empty). */
function merge(task, snapshot) {
  return { ...task, ...snapshot, sub_executions: snapshot.sub_executions?.length ? snapshot.sub_executions : task.sub_executions };
}

function message(m) {
  const content =
    m.role === 'assistant' && m.content ? h('div', { class: 'markdown', safeHtml: renderMarkdown(m.content) }) : m.content ? h('pre', { class: 'prewrap text-block' }, m.content) : null;
  return h(
    'li',
    { class: `message role-${m.role}` },
    h('div', { class: 'message-head' }, h('span', { class: 'role' }, m.role), m.tool_call_id ? h('span', { class: 'muted mono' }, `answers ${m.tool_call_id}`) : null, timeEl(m.created_at)),
    content,
    m.tool_calls?.length
      ? h('details', { class: 'json-details' }, h('summary', {}, `Tool calls: ${m.tool_calls.map((c) => c.name).join(', ')}`), jsonBlock(m.tool_calls, 'Tool calls'))
      : null,
  );
}
