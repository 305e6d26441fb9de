// Types for the agent editor's pure helpers, so TypeScript tests can import them (not served to browsers).
export interface FieldSpec {
  path: string[];
  label: string;
  kind: string;
  [extra: string]: unknown;
}
export const CONFIG_FIELDS: string[];
export const ROLLBACK_SKIP: Set<string>;
export const FIELD_GROUPS: { id: string; title: string; fields: FieldSpec[] }[];
export const ALL_FIELDS: FieldSpec[];
export function fieldId(path: string[]): string;
export function getPath(obj: unknown, path: string[]): unknown;
export function setPath(obj: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown>;
export function fieldForLoc(loc: (string | number)[], fields?: FieldSpec[]): { field: FieldSpec; rest: string[] } | null;
export function stableJson(v: unknown): string;
export function buildBody(values: [string, unknown][], initial?: Record<string, unknown> | null): Record<string, any>;
export function configDiff(before: Record<string, unknown>, after: Record<string, unknown>): { field: string; before: unknown; after: unknown }[];
export function rollbackBody(version: Record<string, unknown>): Record<string, unknown>;
export function toolEntry(type: string, ref: string, operations?: string): Record<string, unknown>;
export function toolRef(entry: Record<string, unknown>): string;
