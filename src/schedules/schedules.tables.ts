/** The schedules domain's tables (migration 0014). Times are epoch milliseconds. */
export interface SchedulesTables {
  schedules: {
    organization_id: string;
    id: string;
    agent_id: string;
    name: string | null;
    /** 'cron' | 'interval' | 'once' */
    kind: string;
    cron: string | null;
    /** IANA time zone the cron expression is read in. */
    timezone: string | null;
    interval_seconds: number | null;
    run_at: number | null;
    /** JSON of ScheduledInvocation: what each occurrence submits. */
    invocation: string;
    enabled: number;
    /** The occurrence the scheduler fires next; null when paused or when a one-off has run. */
    next_run_at: number | null;
    last_run_at: number | null;
    last_task_id: string | null;
    /** Outcome of the last occurrence: see OCCURRENCE_OUTCOMES. */
    last_outcome: string | null;
    run_count: number;
    skipped_count: number;
    /** 'api' (a caller of the REST API) or 'agent' (the agent's self-scheduling tool, in task created_by_task_id). */
    created_by_type: string;
    created_by_task_id: string | null;
    created_at: number;
    updated_at: number;
  };
  schedule_occurrences: {
    organization_id: string;
    schedule_id: string;
    due_at: number;
    fired_at: number;
    outcome: string;
    task_id: string | null;
    detail: string | null;
  };
}
