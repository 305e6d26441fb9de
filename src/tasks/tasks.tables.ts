import type { Generated } from 'kysely';

/**
 * The tasks domain's tables. The `tasks` row is both the record the API shows and the queue entry the
 * workers claim: there is no second job store to keep consistent with it.
 */
export interface TasksTables {
  tasks: {
    organization_id: string;
    /** Caller-chosen (1-128 printable characters) or a UUIDv7; unique within the organization. */
    id: string;
    agent_id: string;
    /** A published version number as text, or 'draft'. */
    agent_version: string;
    status: string;
    source: string;
    input_text: string;
    input_files: string;
    input_user: string | null;
    user_id: string | null;
    title: string | null;
    result: string | null;
    additional_context: string | null;
    expected_output: string | null;
    instructions_override: string | null;
    output_format: string | null;
    output_schema: string | null;
    disable_attachment_injection: number;
    /** The submission's user tokens, sealed with the secret box; wiped when the task ends. */
    sealed_user_tokens: string | null;
    parent_execution: string | null;
    /** Agent calls that led to this task (src/tasks/call-depth.ts); 0 for a call from outside. */
    call_depth: number;
    /** A webhook caller's `callback_url` for this run: called with the signed notification when the run ends. */
    callback_url: string | null;
    is_manually_stopped: number;
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    llm_model_provider: string | null;
    llm_model_name: string | null;
    /** How many times this conversation was submitted (a continuation adds one). */
    run: number;
    /** Claims of the current run (reset when a conversation is continued). */
    execution_attempts: number;
    /** Claims allowed before a task whose worker keeps dying ends `error` (from the retry strategy). */
    max_attempts: number;
    /** Fencing token: increases on every claim, stop and sweep, never resets; every worker write checks it. */
    fence: number;
    lease_owner: string | null;
    lease_expires_at: number | null;
    heartbeat_at: number | null;
    /** The earliest time the task may be claimed (retry back-off); the order within a fair rank. */
    queued_at: number;
    /**
     * The claim's order while pending (task-fair-ranks.repository.ts): fair across organizations, oldest first within
     * one. Given whenever the task enters the queue; null for a task that never waited (a synchronous run).
     */
    fair_rank: number | null;
    hitl_request: string | null;
    hitl_decision: string | null;
    created_at: number;
    updated_at: number;
    started_at: number | null;
    finished_at: number | null;
    /** The schedule whose occurrence made the task (src/schedules/); null otherwise. */
    schedule_id: string | null;
    /**
     * 1: the submission's texts (PAYLOAD_COLUMNS) are in `task_payloads`, and this row holds '' and nulls in their
     * place (task-payloads.repository.ts); 0: they are here.
     */
    payload_stored: Generated<number>;
  };
  /** A large submission's texts, out of the hot `tasks` row (task-payloads.repository.ts). */
  task_payloads: {
    organization_id: string;
    task_id: string;
    input_text: string;
    additional_context: string | null;
    expected_output: string | null;
    instructions_override: string | null;
    output_schema: string | null;
  };
  /** The execution trace (docs/contract.md#task-events), in insertion order. */
  task_events: {
    seq: Generated<number>;
    organization_id: string;
    task_id: string;
    type: string;
    time: number;
    data: string;
  };
  /** The conversation thread of a task, across its runs. */
  task_messages: {
    seq: Generated<number>;
    organization_id: string;
    task_id: string;
    run: number;
    role: string;
    content: string;
    tool_calls: string | null;
    tool_call_id: string | null;
    created_at: number;
  };
  /** One row per submission (run), so daily run limits count continued conversations too. */
  task_runs: {
    organization_id: string;
    task_id: string;
    run: number;
    agent_id: string;
    created_at: number;
  };
  /**
   * Each organization's highest fair rank given (task-fair-ranks.repository.ts): where its next task entering the
   * queue goes, unless the claim frontier is past it. One row per organization that ever queued a task.
   */
  task_queue_ranks: {
    organization_id: string;
    last_rank: number;
  };
  /** Events remembered by duplication_prevention (task-dedup.ts): the task an event started, until `expires_at`. */
  task_dedup_keys: {
    organization_id: string;
    agent_id: string;
    /** SHA-256 (base64url) of the selected values: the values themselves (emails, ids) are not kept. */
    key: string;
    task_id: string;
    expires_at: number;
  };
  /**
   * New tasks of asynchronous webhook calls, committed before the call is answered and moved into `tasks` (with
   * their run and `task_created` event) by whoever reads tasks next: see task-inbox.ts.
   */
  task_inbox: {
    seq: Generated<number>;
    /** The task row as JSON. */
    row: string;
  };
}
