import { GroupCommit } from '../lib/group-commit.js';
import type { TaskInboxRepository } from './task-inbox.repository.js';
import { eventRow, presentTask } from './task.presenter.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';

/** Entries per append transaction: one bound parameter each. */
const APPEND_BATCH = 500;
/** Entries moved per transaction: 40 columns each, well under SQLite's 32,766 bound parameters per statement. */
const MOVE_BATCH = 500;

/**
 * The task inbox: where an asynchronous webhook call commits its new task before it is answered.
 *
 * Why: a new task in `tasks` is five B-tree inserts (the row and its queue, list and agent indexes), plus its
 * run and its `task_created` event with theirs; an inbox entry is one row appended to one table. Webhook senders
 * wait only for the inbox commit (durable all the same), so a burst is absorbed at the rate of the append, and
 * the indexing is paid once per batch of hundreds by whoever reads next.
 *
 * The inbox is invisible to every reader: the task lists, the daily run count and the workers' claims first
 * `settle()` it, which moves every entry committed before the call into `tasks`. The asynchronous answer's
 * `x-task-id` header makes an inbox task's id known outside, so reading one task by id settles on a miss only
 * (`findAccepted` below). Entries keep their acceptance time as `created_at`; their `task_created` event is written
 * by the move.
 */
export class TaskInbox {
  private readonly writes = new GroupCommit<string, void>(async (rows) => {
    await this.repo.append(rows);
    return rows.map(() => undefined);
  }, APPEND_BATCH);
  private current?: Promise<number>;
  private next?: Promise<number>;
  /** The organization of this process's latest entry (see interleaves). */
  private lastOrganization?: string;

  constructor(
    private readonly repo: TaskInboxRepository,
    private readonly onMoved: () => void,
  ) {}

  /**
   * Whether an entry of `organizationId` about to be appended follows another organization's, or is this process's
   * first (it may follow anyone's); notes it as the latest. A worker moves only the inbox's oldest entries
   * (settleOldest), so one organization's deep backlog there would hold every later organization's task behind it,
   * whatever the claim's fair order in `tasks`: an entry that interleaves organizations makes the worker move
   * everything instead (task-claimer.ts), so that every waiting task is ranked. A burst of one organization's calls
   * compares one string per call and changes nothing. Known limit: a process that only ever accepts one
   * organization's calls while another process accepts another's sees no interleaving after its first entry.
   */
  interleaves(organizationId: string): boolean {
    if (this.lastOrganization === organizationId) return false;
    this.lastOrganization = organizationId;
    return true;
  }

  /** Resolves once the task is committed to the inbox. */
  append(row: TaskRow): Promise<void> {
    return this.writes.add(compactRow(row));
  }

  /**
   * Moves every entry committed before this call into `tasks`; resolves with how many this pass moved.
   * Concurrent callers share a pass; a caller arriving during a pass waits for the next one, which starts after it
   * (the running pass may have looked before the caller's entries were committed).
   */
  settle(): Promise<number> {
    if (!this.current) {
      this.current = this.pass().finally(() => (this.current = undefined));
      return this.current;
    }
    this.next ??= this.current.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  /**
   * Moves at most the `n` oldest entries into `tasks`: what a worker with `n` free slots can start. A worker needs
   * only those; moving the whole inbox whenever a slot frees would index every accepted task on the accept's own
   * thread in the default deployment (all roles in one process), long before any worker can run it. Readers still
   * settle everything (`settle`). Safe beside other passes and processes: a move takes its entries in one transaction.
   */
  async settleOldest(n: number): Promise<number> {
    if (n <= 0) return 0;
    const upTo = await this.repo.lastSeq();
    if (upTo === undefined) return 0;
    const batch = await this.moveOldest(Math.min(n, MOVE_BATCH), upTo);
    if (batch.rows.length) this.onMoved();
    return batch.rows.length;
  }

  /** One move transaction: up to `limit` entries at or before `upTo`, oldest first, each with its task_created event. */
  private moveOldest(limit: number, upTo: number): Promise<{ rows: TaskRow[]; more: boolean }> {
    return this.repo.move(limit, upTo, expandRow, (row) => eventRow(row, 'task_created', row.created_at, presentTask(row)));
  }

  private startNext(): Promise<number> {
    this.next = undefined;
    return this.settle();
  }

  private async pass(): Promise<number> {
    // Entries committed after this point are not this pass's business: bounding it lets a pass end under load.
    const upTo = await this.repo.lastSeq();
    if (upTo === undefined) return 0;
    let moved = 0;
    for (let more = true; more; ) {
      const batch = await this.moveOldest(MOVE_BATCH, upTo);
      moved += batch.rows.length;
      more = batch.more;
    }
    if (moved) this.onMoved();
    return moved;
  }
}

/**
 * A task by id, settling the inbox first when it is not found: an asynchronous webhook call's answer carries its
 * task's id (`x-task-id`) while the task may still wait in the inbox. Only a miss pays for the settle.
 */
export async function findAccepted(repo: Pick<TasksRepository, 'find'>, inbox: TaskInbox, organizationId: string, taskId: string): Promise<TaskRow | undefined> {
  const row = await repo.find(organizationId, taskId);
  if (row) return row;
  await inbox.settle();
  return repo.find(organizationId, taskId);
}

/**
 * Every column of a new task with the value most new tasks have. It repeats newTaskRow's starting values on purpose:
 * it is part of the stored entry format (an entry omits what equals it), so it must not change when newTaskRow's
 * defaults do, or entries committed before an upgrade would expand wrongly. A column missing here is simply always
 * stored.
 */
const TYPICAL_NEW_TASK: Readonly<Partial<TaskRow>> = Object.freeze({
  status: 'pending',
  source: 'webhook',
  input_files: '[]',
  input_user: null,
  user_id: null,
  title: null,
  result: null,
  additional_context: null,
  expected_output: null,
  instructions_override: null,
  output_format: null,
  output_schema: null,
  disable_attachment_injection: 0,
  sealed_user_tokens: null,
  parent_execution: null,
  call_depth: 0,
  is_manually_stopped: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  llm_model_provider: null,
  llm_model_name: null,
  run: 1,
  execution_attempts: 0,
  fence: 0,
  lease_owner: null,
  lease_expires_at: null,
  heartbeat_at: null,
  hitl_request: null,
  hitl_decision: null,
  started_at: null,
  finished_at: null,
  schedule_id: null,
  fair_rank: null,
  // Always 0 in the inbox: the texts are moved out of the row when it goes into `tasks` (task-payloads.repository.ts).
  payload_stored: 0,
});

/** In an entry's title position: the title is the input text itself (a short one-line prompt's title is). */
const TITLE_IS_INPUT = 0;

/**
 * The row as an inbox entry: one JSON array, written by one JSON.stringify call.
 *
 *   [organization_id, id, agent_id, agent_version, input_text, title, output_format, callback_url, max_attempts,
 *    created_at, {other columns whose value is not the typical one}?]
 *
 * The ten columns every new task sets come by position, the title as 0 when it is the input text, and the rest only
 * when untypical (as does queued_at or updated_at when not created_at). Against the earlier entry (an object of the
 * untypical columns, written out column by column) it is half the bytes (179 against 383 for a typical webhook call:
 * fewer WAL pages per commit) and half the CPU (0.43 against 0.95 us, microbenchmark): no key names, no string
 * built piece by piece. Entries of the earlier form are still read (`expandRow`): an upgrade may find some waiting.
 * test/tasks/task-inbox.test.ts round-trips a row whose every column is untypical, so a column added to TaskRow
 * and not here fails it.
 */
export function compactRow(r: TaskRow): string {
  const entry: unknown[] = [
    r.organization_id,
    r.id,
    r.agent_id,
    r.agent_version,
    r.input_text,
    r.title === r.input_text ? TITLE_IS_INPUT : r.title,
    r.output_format,
    r.callback_url,
    r.max_attempts,
    r.created_at,
  ];
  const other = untypicalColumns(r);
  if (other) entry.push(other);
  return JSON.stringify(entry);
}

/** The columns outside an entry's positions that differ from TYPICAL_NEW_TASK (or from created_at), if any. */
function untypicalColumns(r: TaskRow): Partial<TaskRow> | undefined {
  // Compared one by one, not looped over TYPICAL_NEW_TASK's keys: a keyed read of the row per column cost more
  // than the whole comparison, and nearly every row has nothing to add.
  let x: Partial<TaskRow> | undefined;
  if (r.status !== 'pending') (x ??= {}).status = r.status;
  if (r.source !== 'webhook') (x ??= {}).source = r.source;
  if (r.input_files !== '[]') (x ??= {}).input_files = r.input_files;
  if (r.input_user !== null) (x ??= {}).input_user = r.input_user;
  if (r.user_id !== null) (x ??= {}).user_id = r.user_id;
  if (r.result !== null) (x ??= {}).result = r.result;
  if (r.additional_context !== null) (x ??= {}).additional_context = r.additional_context;
  if (r.expected_output !== null) (x ??= {}).expected_output = r.expected_output;
  if (r.instructions_override !== null) (x ??= {}).instructions_override = r.instructions_override;
  if (r.output_schema !== null) (x ??= {}).output_schema = r.output_schema;
  if (r.disable_attachment_injection !== 0) (x ??= {}).disable_attachment_injection = r.disable_attachment_injection;
  if (r.sealed_user_tokens !== null) (x ??= {}).sealed_user_tokens = r.sealed_user_tokens;
  if (r.parent_execution !== null) (x ??= {}).parent_execution = r.parent_execution;
  if (r.call_depth !== 0) (x ??= {}).call_depth = r.call_depth;
  if (r.is_manually_stopped !== 0) (x ??= {}).is_manually_stopped = r.is_manually_stopped;
  if (r.prompt_tokens !== 0) (x ??= {}).prompt_tokens = r.prompt_tokens;
  if (r.completion_tokens !== 0) (x ??= {}).completion_tokens = r.completion_tokens;
  if (r.total_tokens !== 0) (x ??= {}).total_tokens = r.total_tokens;
  if (r.llm_model_provider !== null) (x ??= {}).llm_model_provider = r.llm_model_provider;
  if (r.llm_model_name !== null) (x ??= {}).llm_model_name = r.llm_model_name;
  if (r.run !== 1) (x ??= {}).run = r.run;
  if (r.execution_attempts !== 0) (x ??= {}).execution_attempts = r.execution_attempts;
  if (r.fence !== 0) (x ??= {}).fence = r.fence;
  if (r.lease_owner !== null) (x ??= {}).lease_owner = r.lease_owner;
  if (r.lease_expires_at !== null) (x ??= {}).lease_expires_at = r.lease_expires_at;
  if (r.heartbeat_at !== null) (x ??= {}).heartbeat_at = r.heartbeat_at;
  if (r.queued_at !== r.created_at) (x ??= {}).queued_at = r.queued_at;
  if (r.hitl_request !== null) (x ??= {}).hitl_request = r.hitl_request;
  if (r.hitl_decision !== null) (x ??= {}).hitl_decision = r.hitl_decision;
  if (r.updated_at !== r.created_at) (x ??= {}).updated_at = r.updated_at;
  if (r.started_at !== null) (x ??= {}).started_at = r.started_at;
  if (r.finished_at !== null) (x ??= {}).finished_at = r.finished_at;
  if (r.schedule_id !== null) (x ??= {}).schedule_id = r.schedule_id;
  if (r.fair_rank !== null) (x ??= {}).fair_rank = r.fair_rank;
  if (r.payload_stored !== 0) (x ??= {}).payload_stored = r.payload_stored;
  return x;
}

/** An inbox entry back as the whole row: an array (compactRow), or an object of untypical columns (before it). */
export function expandRow(entry: string): TaskRow {
  const parsed = JSON.parse(entry) as unknown;
  if (!Array.isArray(parsed)) return { ...TYPICAL_NEW_TASK, ...(parsed as Partial<TaskRow>) } as TaskRow;
  const [organization_id, id, agent_id, agent_version, input_text, title, output_format, callback_url, max_attempts, created_at, other] = parsed as [
    string, string, string, string, string, string | null | typeof TITLE_IS_INPUT, string | null, string | null, number, number, Partial<TaskRow> | undefined,
  ];
  return {
    ...TYPICAL_NEW_TASK,
    organization_id,
    id,
    agent_id,
    agent_version,
    input_text,
    title: title === TITLE_IS_INPUT ? input_text : title,
    output_format,
    callback_url,
    max_attempts,
    queued_at: created_at,
    created_at,
    updated_at: created_at,
    ...other,
  } as TaskRow;
}
