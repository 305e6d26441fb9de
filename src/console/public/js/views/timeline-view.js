import { h } from '../dom.js';
import { jsonBlock } from '../components.js';
import { formatDuration, formatNumber, formatTokens, prettyJson } from '../format.js';
import { TraceModel } from '../trace.js';

const KIND_LABELS = { lifecycle: 'Task', llm: 'LLM', tool: 'Tool', sub_agent: 'Sub-agent', auth: 'Auth', plan: 'Plan', other: 'Event' };
/** How a plan step's status shows (text marks: no stylesheet change needed). */
const STEP_MARKS = { pending: '☐', in_progress: '◐', completed: '☑', failed: '☒', skipped: '⊘' };

/**
 * The execution trace as an ordered list that grows while the task runs. Each entry is re-rendered in place when
 * its events arrive (a tool call's result, an LLM call's chunks), keeping any disclosure the user opened.
 */
export class TimelineView {
  constructor({ taskLink }) {
    this.model = new TraceModel();
    this.items = new Map();
    this.taskLink = taskLink;
    this.summary = h('p', { class: 'timeline-summary', id: 'timeline-summary' });
    this.list = h('ol', { class: 'timeline', 'aria-describedby': 'timeline-summary' });
    this.empty = h('p', { class: 'empty' }, 'No events yet.');
    this.element = h('div', {}, this.summary, this.empty, this.list);
    this.renderSummary();
  }

  /** Adds one event; returns the entry it touched (null when nothing shows). */
  add(event) {
    const entry = this.model.add(event);
    if (!entry) return null;
    this.empty.hidden = true;
    const previous = this.items.get(entry.key);
    const li = this.renderEntry(entry, previous);
    if (previous) previous.replaceWith(li);
    else this.list.append(li);
    this.items.set(entry.key, li);
    this.renderSummary();
    return entry;
  }

  renderSummary() {
    const t = this.model.totals;
    this.summary.textContent =
      `${t.llmCalls} LLM call${t.llmCalls === 1 ? '' : 's'}` +
      (t.llmErrors ? ` (${t.llmErrors} failed)` : '') +
      ` · ${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}` +
      (t.toolErrors ? ` (${t.toolErrors} failed)` : '') +
      ` · ${formatNumber(t.total)} tokens (${formatNumber(t.prompt)} in / ${formatNumber(t.completion)} out)`;
  }

  renderEntry(e, previous) {
    const openStates = previous ? [...previous.querySelectorAll('details')].map((d) => d.open) : [];
    const offset = this.model.offset(e.time);
    const failed = !!e.error || e.isError;
    const meta = [];
    if (e.running) meta.push(h('span', { class: 'badge status-executing' }, 'running'));
    if (e.durationMs !== null && e.durationMs !== undefined) meta.push(h('span', { class: 'meta' }, formatDuration(e.durationMs)));
    if (e.kind === 'llm' && e.tokens) meta.push(h('span', { class: 'meta' }, `${formatTokens(e.tokens)} tokens`));
    if (e.kind === 'llm' && e.finishReason && e.finishReason !== 'error') meta.push(h('span', { class: 'meta' }, `finish: ${e.finishReason}`));
    if (failed) meta.push(h('span', { class: 'badge status-error' }, 'error'));
    if (e.kind === 'lifecycle' && e.status) meta.push(h('span', { class: `badge status-${e.status}` }, e.status));

    const li = h(
      'li',
      { class: `entry kind-${e.kind}${failed ? ' failed' : ''}`, dataset: { key: e.key } },
      h(
        'div',
        { class: 'entry-head' },
        h('span', { class: 'offset mono', title: 'Time since the task was created' }, offset === null ? '' : `+${formatDuration(offset)}`),
        h('span', { class: `kind kind-${e.kind}` }, KIND_LABELS[e.kind] ?? e.kind),
        h('span', { class: 'entry-title' }, e.title),
        ...meta,
      ),
      this.body(e),
    );
    li.querySelectorAll('details').forEach((d, k) => {
      if (openStates[k]) d.open = true;
    });
    return li;
  }

  body(e) {
    const parts = [];
    const details = (label, content) => h('details', { class: 'json-details' }, h('summary', {}, label), content);
    if (e.error) parts.push(h('pre', { class: 'entry-error', role: e.running ? null : 'note' }, typeof e.error === 'string' ? e.error : prettyJson(e.error)));
    switch (e.kind) {
      case 'llm':
        if (e.toolCalls?.length) parts.push(h('p', { class: 'meta' }, `Requested tools: ${e.toolCalls.join(', ')}`));
        if (e.input) parts.push(details(`Input (${(e.input.messages ?? []).length} messages${e.input.truncated ? ', shortened' : ''})`, llmInputBlock(e.input)));
        if (e.text) parts.push(details(e.running ? 'Streaming output' : 'Output', h('pre', { class: 'prewrap text-block', tabindex: '0' }, e.text)));
        if (e.output?.tool_calls?.length) parts.push(details('Tool calls requested', jsonBlock(e.output.tool_calls, 'Tool calls requested')));
        if (e.data) {
          // The input and output have their own blocks above; the details stay short.
          const { input: _input, output: _output, ...rest } = e.data;
          parts.push(details('Call details (JSON)', jsonBlock(rest, 'LLM call details')));
        }
        break;
      case 'tool':
        if (e.payload !== undefined) parts.push(details('Arguments', jsonBlock(e.payload, `Arguments of ${e.toolName}`)));
        if (!e.running && !e.isError) parts.push(details('Result', jsonBlock(e.result, `Result of ${e.toolName}`)));
        break;
      case 'sub_agent':
        if (e.taskId) parts.push(h('p', {}, 'Child task: ', this.taskLink(e.taskId)));
        if (e.payload !== undefined) parts.push(details('Input', jsonBlock(e.payload, 'Sub-agent input')));
        break;
      case 'plan':
        parts.push(planChecklist(e.plan));
        break;
      case 'lifecycle':
        if (e.eventType === 'task_finished' && e.task?.result) parts.push(details('Result', h('pre', { class: 'prewrap text-block', tabindex: '0' }, String(e.task.result))));
        break;
      default:
        parts.push(details('Event data (JSON)', jsonBlock(e.data, 'Event data')));
    }
    return parts.length ? h('div', { class: 'entry-body' }, parts) : null;
  }
}

/** Deep planning's checklist: one line per step with its status, attempts and note. */
function planChecklist(plan) {
  const items = (plan?.steps ?? []).map((s) => {
    const extra = [s.status.replace('_', ' '), s.attempts > 1 ? `attempt ${s.attempts}` : null, s.note || null].filter(Boolean).join(' · ');
    return h('li', { class: `plan-step plan-${s.status}`, dataset: { status: s.status } }, `${STEP_MARKS[s.status] ?? '•'} ${s.id}. ${s.title}`, h('span', { class: 'meta' }, ` (${extra})`));
  });
  const retries = h('p', { class: 'meta' }, `Retries used: ${plan?.retries_used ?? 0} of ${plan?.max_retries ?? 0}`);
  return h('div', { class: 'plan' }, plan?.goal ? h('p', {}, `Goal: ${plan.goal}`) : null, h('ul', { class: 'plan-steps', 'aria-label': 'Plan steps' }, items), retries);
}

/** The messages an LLM call was sent, one block per message (role, then its text), the system prompt first. */
function llmInputBlock(input) {
  const blocks = [];
  if (input.system) blocks.push(h('div', { class: 'llm-message' }, h('p', { class: 'meta' }, 'system'), h('pre', { class: 'prewrap text-block', tabindex: '0' }, String(input.system))));
  for (const m of Array.isArray(input.messages) ? input.messages : []) {
    blocks.push(h('div', { class: 'llm-message' }, h('p', { class: 'meta' }, String(m.role ?? '')), h('pre', { class: 'prewrap text-block', tabindex: '0' }, String(m.content ?? ''))));
  }
  return h('div', { class: 'llm-input' }, blocks);
}
