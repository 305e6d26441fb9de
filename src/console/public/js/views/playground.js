import { api, ApiError, path, query } from '../api.js';
import { announce, h, replaceChildren } from '../dom.js';
import { errorAlert, jsonBlock, loading, statusBadge } from '../components.js';
import { formatBytes, isFinal } from '../format.js';
import { renderMarkdown } from '../markdown.js';
import { invokeStream } from '../playground-stream.js';
import { followTask } from '../task-stream.js';
import { TimelineView } from './timeline-view.js';

/**
 * An agent's playground (#/agents/{id}/playground?version=&task=): chat with the agent, its answer streamed as the
 * model writes it, the run's trace growing beside it. The first message starts a task; every next one continues
 * that task (the API's conversation continuation: same task id, history kept), so the conversation is one thread
 * the task page can show later. `task=` in the address reopens a conversation; `version=` picks what runs.
 */
export async function renderPlayground(root, ctx, agentId) {
  ctx.setTitle('Playground');
  root.append(loading('Loading agent…'));
  const [agent, versions] = await Promise.all([
    api('GET', path`/v1/agents/${agentId}`, { signal: ctx.signal }),
    api('GET', `${path`/v1/agents/${agentId}/versions`}${query({ per_page: 50 })}`, { signal: ctx.signal }).catch(() => ({ items: [] })),
  ]);
  ctx.setTitle(`Playground · ${agent.name}`);
  let taskId = ctx.params.get('task');
  let running = false;

  const versionSelect = h(
    'select',
    { id: 'playground-version' },
    h('option', { value: '' }, 'Deployed version'),
    agent.has_pending_changes ? h('option', { value: 'draft' }, 'Draft (not deployed)') : null,
    versions.items.map((v) => h('option', { value: String(v.version) }, `Version ${v.version}${v.is_latest ? ' (deployed)' : ''}`)),
  );
  versionSelect.value = ctx.params.get('version') ?? '';
  versionSelect.addEventListener('change', remember);

  const taskLinkSlot = h('span', { class: 'task-link' });
  const log = h('ol', { class: 'chat-log', 'aria-label': 'Chat log' });
  const empty = h('p', { class: 'empty' }, 'Send a message to start a conversation.');
  const message = h('textarea', { id: 'playground-message', rows: 3, placeholder: 'Ask the agent something… (Ctrl+Enter sends)' });
  const files = h('input', { type: 'file', id: 'playground-files', multiple: true });
  const send = h('button', { type: 'submit', class: 'button primary' }, 'Send');
  const stop = h('button', { type: 'button', class: 'button danger-outline', hidden: true, onclick: stopRun }, 'Stop');
  const formStatus = h('div', { id: 'playground-status' });
  const form = h(
    'form',
    { class: 'chat-form', onsubmit: (e) => (e.preventDefault(), void run()) },
    h('label', { for: 'playground-message' }, 'Message'),
    message,
    h('div', { class: 'chat-form-row' }, h('label', { for: 'playground-files', class: 'file-label' }, 'Attach files'), files, stop, send),
    formStatus,
  );
  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void run();
    }
  });

  let timeline = new TimelineView({ taskLink });
  const traceBody = h('div', {}, timeline.element);
  const streamState = h('p', { class: 'stream-state', role: 'status' });

  replaceChildren(
    root,
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, 'Playground · ', h('a', { href: `#${path`/agents/${agent.id}`}` }, agent.name)),
      h(
        'div',
        { class: 'actions' },
        h('label', { for: 'playground-version' }, 'Version'),
        versionSelect,
        h('button', { type: 'button', class: 'button secondary', onclick: newConversation }, 'New conversation'),
        taskLinkSlot,
      ),
    ),
    h(
      'div',
      { class: 'playground' },
      h('section', { class: 'panel chat', 'aria-labelledby': 'chat-title' }, h('h2', { id: 'chat-title' }, 'Conversation'), empty, log, form),
      h('section', { class: 'panel', 'aria-labelledby': 'live-trace-title' }, h('div', { class: 'section-head' }, h('h2', { id: 'live-trace-title' }, 'Trace'), streamState), traceBody),
    ),
  );

  if (taskId) await reopen(taskId);
  showTaskLink();
  return message;

  /** Stops the running task (POST /v1/tasks/{id}/stop); the stream then ends with the stopped task. */
  async function stopRun() {
    if (!taskId) return;
    stop.disabled = true;
    try {
      await api('POST', path`/v1/tasks/${taskId}/stop`, { signal: ctx.signal });
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(formStatus, errorAlert(e));
    } finally {
      stop.disabled = false;
    }
  }

  /** One turn's events: the trace, the streamed text in the agent's bubble, approval requests, the final task. */
  function turnOf(answer) {
    let streamed = '';
    let iteration = null;
    let final = null;
    return {
      final: () => final,
      onEvent(ev) {
        timeline.add(ev);
        const data = ev.data && typeof ev.data === 'object' ? ev.data : {};
        if (ev.type.startsWith('task_') && data.id && !taskId) {
          taskId = data.id;
          showTaskLink();
          remember();
        }
        if (ev.type.startsWith('task_') && taskId) stop.hidden = false;
        if (ev.type === 'chunk') {
          // A new model call (after a tool) starts a new text: show what the model writes now.
          if (data.iteration !== iteration) streamed = '';
          iteration = data.iteration;
          streamed += String(data.text ?? '');
          setAnswer(answer, { streaming: streamed });
        }
        if (ev.type === 'task_updated' && data.status === 'paused' && data.hitl_request) askApproval(answer, data.hitl_request);
        if (ev.type === 'task_updated' && data.status !== 'paused') answer.querySelector('.approval')?.remove();
        if (ev.type === 'task_finished' || (ev.type === 'task_updated' && isFinal(data.status))) final = data;
      },
    };
  }

  /** A reopened conversation whose turn is still running (a reload mid-answer): follow it to its end. */
  async function followRunning(task, delivered) {
    const id = task.id;
    running = true;
    send.disabled = true;
    const answer = bubble('assistant', null);
    log.append(answer);
    empty.hidden = true;
    const turn = turnOf(answer);
    stop.hidden = false;
    if (task.status === 'paused' && task.hitl_request) askApproval(answer, task.hitl_request);
    await followTask(id, { delivered, signal: ctx.signal, isDone: () => turn.final() !== null, onEvent: turn.onEvent });
    if (ctx.signal.aborted) return;
    setAnswer(answer, { task: turn.final() ?? (await untilFinal(id, ctx.signal)) });
    running = false;
    send.disabled = false;
    stop.hidden = true;
  }

  /**
   * A supervised agent waits for a person before a tool that changes something: the request shows in the agent's
   * bubble with Approve and Reject; the stream stays open and the run goes on (or ends) after the decision.
   */
  function askApproval(li, request) {
    if (li.querySelector('.approval')) return;
    const decide = (what) => async (ev) => {
      for (const b of box.querySelectorAll('button')) b.disabled = true;
      try {
        await api('POST', path`/v1/tasks/${taskId}/${what}`, { signal: ctx.signal });
        box.remove();
      } catch (e) {
        for (const b of box.querySelectorAll('button')) b.disabled = false;
        ev.target.after(errorAlert(e));
      }
    };
    const box = h(
      'div',
      { class: 'approval panel attention', role: 'group', 'aria-label': 'Approval needed' },
      h('p', {}, `The agent wants to call ${request.tool}.`),
      jsonBlock(request.arguments, 'Arguments of the call waiting for approval'),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'button primary', onclick: decide('approve') }, 'Approve'),
        h('button', { type: 'button', class: 'button danger-outline', onclick: decide('reject') }, 'Reject'),
      ),
    );
    li.append(box);
    announce(`Approval needed: the agent wants to call ${request.tool}`);
    box.querySelector('button').focus();
  }

  function taskLink(id) {
    return h('a', { href: `#${path`/tasks/${id}`}`, class: 'mono' }, id);
  }

  function showTaskLink() {
    replaceChildren(taskLinkSlot, taskId ? h('a', { href: `#${path`/tasks/${taskId}`}` }, 'Open the task') : null);
  }

  /** Keeps the conversation in the address (without re-rendering), so a reload continues it. */
  function remember() {
    history.replaceState(null, '', `#${path`/agents/${agent.id}/playground`}${query({ version: versionSelect.value, task: taskId })}`);
  }

  function newConversation() {
    if (running) return;
    taskId = null;
    replaceChildren(log);
    empty.hidden = false;
    timeline = new TimelineView({ taskLink });
    replaceChildren(traceBody, timeline.element);
    replaceChildren(formStatus);
    streamState.textContent = '';
    showTaskLink();
    remember();
    message.focus();
  }

  /** An earlier conversation: its messages from the thread, its trace from the event log. */
  async function reopen(id) {
    try {
      const [task, thread, events] = await Promise.all([
        api('GET', path`/v1/tasks/${id}`, { signal: ctx.signal }),
        api('GET', path`/v1/tasks/${id}/thread`, { signal: ctx.signal }),
        api('GET', path`/v1/tasks/${id}/events`, { signal: ctx.signal }),
      ]);
      if (task.agent_id !== agent.id) throw new Error('That task belongs to another agent.');
      const list = Array.isArray(thread) ? thread : (thread?.items ?? thread?.messages ?? []);
      for (const m of list) if ((m.role === 'user' || m.role === 'assistant') && m.content) log.append(bubble(m.role, m.content));
      empty.hidden = log.children.length > 0;
      const stored = Array.isArray(events) ? events : [];
      for (const ev of stored) timeline.add(ev);
      if (!isFinal(task.status)) void followRunning(task, stored.length).catch(() => {});
    } catch (e) {
      taskId = null;
      if (!ctx.signal.aborted) replaceChildren(formStatus, errorAlert(e));
    }
  }

  async function run() {
    const text = message.value.trim();
    const attached = [...(files.files ?? [])];
    if (running || (!text && !attached.length)) return;
    running = true;
    send.disabled = true;
    replaceChildren(formStatus);
    empty.hidden = true;
    const question = bubble('user', text, attached);
    log.append(question);
    const answer = bubble('assistant', null);
    log.append(answer);
    answer.scrollIntoView({ block: 'nearest' });
    streamState.textContent = 'Live';
    streamState.className = 'stream-state live';
    const turn = turnOf(answer);
    try {
      await invokeStream(agent.id, { text, files: attached, taskId, version: versionSelect.value || null, signal: ctx.signal, onEvent: turn.onEvent });
      // The stream can end early (a proxy timeout, a dropped connection): the task runs on, so wait for its end.
      const final = turn.final() ?? (taskId ? await untilFinal(taskId, ctx.signal) : null);
      setAnswer(answer, { task: final });
      announce(final?.status === 'completed' ? 'The agent answered' : `The run ended: ${final?.status ?? 'unknown'}`);
      message.value = '';
      files.value = '';
    } catch (e) {
      if (ctx.signal.aborted) return;
      answer.remove();
      // Refused (422, 403, 404...): nothing was sent to the agent, so the message leaves the log (it stays in the box).
      if (e instanceof ApiError && e.status > 0) question.remove();
      empty.hidden = log.children.length > 0;
      replaceChildren(formStatus, errorAlert(e));
    } finally {
      running = false;
      send.disabled = false;
      stop.hidden = true;
      streamState.textContent = '';
      streamState.className = 'stream-state';
      if (!ctx.signal.aborted) message.focus();
    }
  }
}

const FINAL_POLL_MS = 1000;

async function untilFinal(taskId, signal) {
  for (;;) {
    const task = await api('GET', path`/v1/tasks/${taskId}`, { signal });
    if (isFinal(task.status) || task.status === 'paused') return task;
    await new Promise((resolve) => setTimeout(resolve, FINAL_POLL_MS));
  }
}

function bubble(role, text, files = []) {
  const li = h('li', { class: `bubble role-${role}` }, h('p', { class: 'bubble-role' }, role === 'user' ? 'You' : 'Agent'));
  const content = h('div', { class: 'bubble-content' });
  li.append(content);
  if (role === 'user') {
    if (text) content.append(h('p', { class: 'prewrap' }, text));
    if (files.length) content.append(h('ul', { class: 'files' }, files.map((f) => h('li', {}, `Attached: ${f.name} (${formatBytes(f.size)})`))));
  } else if (text === null) {
    content.append(h('p', { class: 'muted', role: 'status' }, 'Thinking…'));
    li.setAttribute('aria-busy', 'true');
  } else content.append(h('div', { class: 'markdown', safeHtml: renderMarkdown(text) }));
  return li;
}

/** The agent's bubble while it writes (plain text as it streams) and when the run ends (Markdown, or the failure). */
function setAnswer(li, { streaming, task }) {
  const content = li.querySelector('.bubble-content');
  if (streaming !== undefined) return replaceChildren(content, h('p', { class: 'prewrap streaming' }, streaming));
  li.removeAttribute('aria-busy');
  const ok = task?.status === 'completed';
  replaceChildren(
    content,
    ok ? null : h('p', {}, statusBadge(task?.status ?? 'unknown')),
    task?.result
      ? h('div', { class: 'markdown', safeHtml: renderMarkdown(String(task.result)) })
      : h('p', { class: 'muted' }, ok ? 'No answer.' : task?.status === 'paused' ? 'Waiting for approval: approve or reject it on the task page.' : 'The run ended without an answer; the trace says why.'),
  );
}
