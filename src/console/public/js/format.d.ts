// Types for the console's browser modules, so TypeScript tests can import them (not served to browsers).
export const TASK_STATUSES: string[];
export const FINAL_STATUSES: Set<string>;
export const TASK_SOURCES: string[];
export function isFinal(status: string): boolean;
export function formatDuration(ms: number | null | undefined): string;
export function durationBetween(startIso: string | null, endIso: string | null, now?: number): number | null;
export function formatTime(iso: string | null | undefined): string;
export function formatNumber(n: number | null | undefined): string;
export function formatBytes(n: number): string;
export function formatTokens(t: Record<string, number | undefined> | null | undefined): string;
export function prettyJson(value: unknown): string;
export function tryParseJson(text: unknown): { ok: true; value: unknown } | { ok: false };
export function shortId(id: string, keep?: number): string;
export function truncate(text: string, max?: number): string;
export function dateInputToIso(value: string, opts?: { endOfDay?: boolean }): string | undefined;
