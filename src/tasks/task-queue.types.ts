import type { NewDeliveryRow } from './task-end-notifier.js';
import type { NewMessageRow, TaskRow } from './tasks.repository.js';

/** A claimed task as one worker holds it: every write below names this fence and is refused once it moved on. */
export interface Lease {
  organizationId: string;
  taskId: string;
  fence: number;
}

/** A trace event as the worker buffers it: its time and data are taken when the run emits it. */
export interface TraceEvent {
  type: string;
  time: number;
  data: string;
}

/** The final event of a run, made from the row as its outcome leaves it. */
export interface FinalEvent {
  type: string;
  data: (row: TaskRow) => string;
}

/** One run's outcome, as `finish` takes it. */
export interface FinishItem {
  lease: Lease;
  fields: FinishFields;
  messages: NewMessageRow[];
  trace: TraceEvent[];
  event: FinalEvent;
  now: number;
  claimed?: TaskRow;
  /** Notification outbox rows, committed with the outcome (only when its fenced update matched). */
  outbox?: NewDeliveryRow[];
}

export interface FinishFields {
  status: 'completed' | 'failed' | 'error';
  result: string;
  tokens: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  llm_model_provider: string | null;
  llm_model_name: string | null;
}
