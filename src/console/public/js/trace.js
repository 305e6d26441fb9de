/**
 * The execution trace as a timeline: folds the task's event stream (docs/contract.md#task-events) into entries the task
 * page renders. A tool call's request and result become one entry; streamed chunks attach to the LLM call they
 * belong to. Each event is added once (task-stream.js skips events already delivered). Pure: unit-tested in Node.
 */

export const ENTRY_KINDS = ['lifecycle', 'llm', 'tool', 'sub_agent', 'auth', 'plan', 'other'];

export class TraceModel {
  constructor() {
    /** @type {Array<object>} entries in arrival order */
    this.entries = [];
    this.toolById = new Map();
    /** The LLM call currently streaming (chunks arrive before its llm_call event). */
    this.openLlm = null;
    this.startTime = null;
    this.lastTask = null;
    /** The latest deep-planning plan of the trace, or null. */
    this.plan = null;
    this.totals = { llmCalls: 0, toolCalls: 0, toolErrors: 0, llmErrors: 0, prompt: 0, completion: 0, total: 0 };
  }

  /** Adds one event ({type, time, data}); returns the entry it created or changed (null when nothing shows). */
  add(event) {
    const time = Date.parse(event.time);
    if (this.startTime === null && Number.isFinite(time)) this.startTime = time;
    const data = event.data && typeof event.data === 'object' ? event.data : {};
    switch (event.type) {
      case 'task_created':
      case 'task_updated':
      case 'task_finished':
        return this.lifecycle(event, data, time);
      case 'chunk':
        return this.chunk(data, time);
      case 'llm_call':
        return this.llmCall(data, time);
      case 'tool_call_request':
        return this.toolRequest(data, time);
      case 'tool_call_result':
        return this.toolResult(data, time);
      case 'sub_agent_trigger':
        return this.push({ kind: 'sub_agent', time, title: 'Sub-agent triggered', agentId: data.agent_id ?? null, taskId: data.task_id ?? null, payload: data.input, data });
      case 'auth_event':
        return this.push({ kind: 'auth', time, title: authTitle(data), data });
      case 'guardrail':
        return this.push({ kind: 'other', time, title: guardrailTitle(data), data });
      case 'plan':
        return this.planEntry(data, time);
      default:
        return this.push({ kind: 'other', time, title: String(event.type), data });
    }
  }

  push(entry) {
    entry.key = `e${this.entries.length}`;
    this.entries.push(entry);
    return entry;
  }

  lifecycle(event, task, time) {
    const previous = this.lastTask;
    if (task && typeof task === 'object' && task.status) this.lastTask = task;
    // An update that changes nothing visible (same status, e.g. a heartbeat) is not worth a line.
    if (event.type === 'task_updated' && previous && previous.status === task.status && !task.retry_reason) return null;
    const title =
      event.type === 'task_created' ? 'Task created' : event.type === 'task_finished' ? `Task ${task.status ?? 'finished'}` : `Status: ${task.status ?? 'updated'}`;
    return this.push({ kind: 'lifecycle', time, title, status: task.status ?? null, error: task.retry_reason ?? null, task, eventType: event.type });
  }

  chunk(data, time) {
    if (!this.openLlm || this.openLlm.iteration !== (data.iteration ?? null)) {
      this.openLlm = this.push({ kind: 'llm', time, title: 'LLM call', running: true, iteration: data.iteration ?? null, text: '', data: null });
    }
    this.openLlm.text += String(data.text ?? '');
    return this.openLlm;
  }

  llmCall(data, time) {
    let entry = this.openLlm && this.openLlm.iteration === (data.iteration ?? null) ? this.openLlm : null;
    this.openLlm = null;
    if (!entry) entry = this.push({ kind: 'llm', time, text: '', iteration: data.iteration ?? null });
    const latency = Number(data.latency_ms);
    Object.assign(entry, {
      // Helper calls (memory extraction, session summary, tool result compression) say what they were for.
      title: `LLM call${data.purpose ? ` (${String(data.purpose).replace(/_/g, ' ')})` : ''}${data.model ? ` · ${data.provider ? `${data.provider}/` : ''}${data.model}` : ''}`,
      running: false,
      // The event is written when the call ends; it started `latency_ms` earlier.
      time: Number.isFinite(latency) && Number.isFinite(time) ? time - latency : entry.time,
      endTime: time,
      durationMs: Number.isFinite(latency) ? latency : null,
      tokens: data.tokens ?? null,
      error: data.error ?? null,
      provider: data.provider ?? null,
      model: data.model ?? null,
      finishReason: data.finish_reason ?? null,
      toolCalls: Array.isArray(data.tool_calls) ? data.tool_calls : [],
      // What the model was sent and answered (bounded by the server: AGENTRY_TRACE_LLM_IO_CHARS).
      input: data.input && typeof data.input === 'object' ? data.input : null,
      output: data.output && typeof data.output === 'object' ? data.output : null,
      data,
    });
    if (!entry.text && entry.output && typeof entry.output.text === 'string') entry.text = entry.output.text;
    this.totals.llmCalls++;
    if (entry.error) this.totals.llmErrors++;
    const t = data.tokens ?? {};
    this.totals.prompt += Number(t.prompt_tokens ?? 0) || 0;
    this.totals.completion += Number(t.completion_tokens ?? 0) || 0;
    this.totals.total += Number(t.total_tokens ?? 0) || 0;
    return entry;
  }

  /** Deep planning (docs/planning-and-chaining.md): each change carries the whole checklist; the latest is `plan`. */
  planEntry(data, time) {
    const plan = data.plan && typeof data.plan === 'object' && Array.isArray(data.plan.steps) ? data.plan : { steps: [] };
    this.plan = plan;
    const done = plan.steps.filter((s) => s.status === 'completed').length;
    const what = { created: 'created', revised: 'revised', retry: `step ${data.step_id} retried`, restored: 'resumed after an interruption' }[data.action] ?? (data.step_id ? `step ${data.step_id} ${String(plan.steps.find((s) => s.id === data.step_id)?.status ?? 'updated').replace('_', ' ')}` : 'updated');
    return this.push({ kind: 'plan', time, title: `Plan ${what} · ${done}/${plan.steps.length} done`, plan, data });
  }

  toolRequest(data, time) {
    // A call the agent's graph ran after another (targets) says so in its title.
    const chained = data.graph && data.graph.step === 'target' ? ` (after ${data.graph.chained_after})` : '';
    const entry = this.push({ kind: 'tool', time, title: `Tool · ${data.tool_name ?? 'unknown'}${chained}`, toolName: data.tool_name ?? null, running: true, payload: data.payload, result: undefined, error: null, durationMs: null, data });
    if (data.tool_call_id) this.toolById.set(String(data.tool_call_id), entry);
    return entry;
  }

  toolResult(data, time) {
    const id = data.tool_call_id ? String(data.tool_call_id) : null;
    let entry = id ? this.toolById.get(id) : null;
    if (!entry || !entry.running) entry = this.push({ kind: 'tool', time, title: `Tool · ${data.tool_name ?? 'unknown'}`, toolName: data.tool_name ?? null, payload: data.payload });
    const duration = Number(data.duration_ms);
    Object.assign(entry, {
      running: false,
      endTime: time,
      durationMs: Number.isFinite(duration) ? duration : null,
      result: data.result,
      isError: data.is_error === true,
      error: data.is_error === true ? data.result : null,
      data,
    });
    if (entry.payload === undefined) entry.payload = data.payload;
    this.totals.toolCalls++;
    if (entry.isError) this.totals.toolErrors++;
    return entry;
  }

  /** Milliseconds from the first event (the task's creation) to `time`. */
  offset(time) {
    return this.startTime === null || !Number.isFinite(time) ? null : time - this.startTime;
  }
}

/** agno_settings guardrails (docs/guardrails.md): "Guardrail · pii masked · tool lookup". */
function guardrailTitle(data) {
  const where = [data.origin, data.name].filter(Boolean).join(' ');
  return ['Guardrail', [data.guard, data.action].filter(Boolean).join(' '), where || null].filter(Boolean).join(' · ');
}

function authTitle(data) {
  const what = data.status ?? data.kind ?? data.event ?? null;
  const who = data.server ?? data.name ?? data.graph_item_id ?? null;
  return ['Authorization', what, who].filter(Boolean).join(' · ');
}
