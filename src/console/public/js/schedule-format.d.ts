// Types for the console's browser modules, so TypeScript tests can import them (not served to browsers).
export function describeInterval(seconds: number): string;
export function describeTiming(s: { kind: string; cron?: string | null; timezone?: string | null; interval_seconds?: number | null }): string;
export function describeOutcome(outcome: string | null | undefined): string | null;
export function describeAuthor(createdBy: { type: string; task_id: string | null } | null | undefined): string;
