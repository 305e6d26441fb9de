// Types for the console's browser modules, so TypeScript tests can import them (not served to browsers).
export interface TraceEntry {
  key: string;
  kind: 'lifecycle' | 'llm' | 'tool' | 'sub_agent' | 'auth' | 'other';
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
  data?: Record<string, unknown> | null;
}
export class TraceModel {
  entries: TraceEntry[];
  startTime: number | null;
  totals: { llmCalls: number; toolCalls: number; toolErrors: number; llmErrors: number; prompt: number; completion: number; total: number };
  add(event: { type: string; time: string; data?: Record<string, unknown> }): TraceEntry | null;
  offset(time: number): number | null;
}
