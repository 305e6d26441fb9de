// Types for the console's browser modules, so TypeScript tests can import them (not served to browsers).
export interface TraceEntry {
  key: string;
  kind: 'lifecycle' | 'llm' | 'tool' | 'sub_agent' | 'auth' | 'plan' | 'other';
  /** Deep planning's checklist after this change (kind plan). */
  plan?: { goal: string | null; steps: { id: number; title: string; status: string; attempts: number; note: string | null }[]; retries_used: number; max_retries: number };
  time: number;
  endTime?: number;
  title: string;
  running?: boolean;
  durationMs?: number | null;
  tokens?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  error?: unknown;
  isError?: boolean;
  text?: string;
  iteration?: number | null;
  toolName?: string | null;
  toolCalls?: string[];
  payload?: unknown;
  result?: unknown;
  status?: string | null;
  task?: Record<string, unknown>;
  taskId?: string | null;
  agentId?: string | null;
  eventType?: string;
  finishReason?: string | null;
  /** An LLM call's input and output as the trace keeps them (bounded by AGENTRY_TRACE_LLM_IO_CHARS). */
  input?: { system: string; messages: { role: string; content: string }[]; truncated: boolean } | null;
  output?: { text: string; tool_calls: { name: string; arguments: string }[]; truncated: boolean } | null;
  data?: Record<string, unknown> | null;
}
export class TraceModel {
  entries: TraceEntry[];
  startTime: number | null;
  plan: TraceEntry['plan'] | null;
  totals: { llmCalls: number; toolCalls: number; toolErrors: number; llmErrors: number; prompt: number; completion: number; total: number };
  add(event: { type: string; time: string; data?: Record<string, unknown> }): TraceEntry | null;
  offset(time: number): number | null;
}
