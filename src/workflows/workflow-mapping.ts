/**
 * The input mapping of workflow steps (docs/workflows.md, "Mapping"): any string of a step's `input`, `value`,
 * `message` or the workflow's `output` may hold `{{ path }}` references, where path is
 *
 *   input                  the run's input ({ text, user, files })
 *   input.text             ... one field of it
 *   steps.<id>.output      an earlier step's output
 *   steps.<id>.output.a.0  ... one field of it (numeric segments index arrays)
 *
 * A string that is exactly one reference takes the referenced value as is (an object stays an object); a reference
 * inside a longer string is written as text (objects as JSON, null and missing values as ''). A path that descends
 * into a string holding JSON reads the parsed JSON, so an agent's JSON answer can be addressed field by field.
 */

const REF_RE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE_RE = /^\s*\{\{\s*([^{}]*?)\s*\}\}\s*$/;
const PATH_RE = /^(input|steps\.[A-Za-z][A-Za-z0-9_-]{0,63}\.output)((?:\.[A-Za-z0-9_-]+)*)$/;

/** One reference found in a template, with where it sits (for a precise 422 `loc`). */
export interface TemplateRef {
  /** The step id a `steps.<id>` reference names; undefined for `input`. */
  step?: string;
  raw: string;
  /** Path of the string inside the template: object keys and array indexes. */
  at: (string | number)[];
  /** Why the reference is malformed; undefined when it is well formed. */
  problem?: string;
}

/** Every `{{ }}` reference of a template, well formed or not. */
export function collectRefs(template: unknown, at: (string | number)[] = []): TemplateRef[] {
  if (typeof template === 'string') {
    const out: TemplateRef[] = [];
    for (const m of template.matchAll(REF_RE)) {
      const raw = m[1].replace(/\[(\d+)\]/g, '.$1');
      const p = PATH_RE.exec(raw);
      if (!p) out.push({ raw: m[1], at, problem: `'{{${m[1]}}}' is not a reference: use {{input...}} or {{steps.<id>.output...}}` });
      else out.push({ raw, at, step: p[1] === 'input' ? undefined : p[1].split('.')[1] });
    }
    return out;
  }
  if (Array.isArray(template)) return template.flatMap((v, i) => collectRefs(v, [...at, i]));
  if (template && typeof template === 'object') return Object.entries(template).flatMap(([k, v]) => collectRefs(v, [...at, k]));
  return [];
}

/** What references resolve against. */
export interface MappingScope {
  input: unknown;
  /** Outputs of the steps that ran; a step that did not run (another branch) reads as null. */
  outputs: ReadonlyMap<string, unknown>;
}

/** The template with every reference replaced (see the file comment). */
export function resolveTemplate(template: unknown, scope: MappingScope): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE_RE.exec(template);
    if (whole) return lookup(whole[1], scope) ?? null;
    return template.replace(REF_RE, (_m, path: string) => asText(lookup(path, scope)));
  }
  if (Array.isArray(template)) return template.map((v) => resolveTemplate(v, scope));
  if (template && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, resolveTemplate(v, scope)]));
  }
  return template;
}

export function asText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function lookup(rawPath: string, scope: MappingScope): unknown {
  const segments = rawPath.replace(/\[(\d+)\]/g, '.$1').split('.');
  let cur: unknown;
  let rest: string[];
  if (segments[0] === 'input') {
    cur = scope.input;
    rest = segments.slice(1);
  } else {
    cur = scope.outputs.get(segments[1]);
    rest = segments.slice(3);
  }
  for (const seg of rest) {
    if (typeof cur === 'string') cur = parseJsonOrUndefined(cur);
    if (Array.isArray(cur)) cur = /^\d+$/.test(seg) ? cur[Number(seg)] : undefined;
    else if (cur && typeof cur === 'object' && Object.prototype.hasOwnProperty.call(cur, seg)) cur = (cur as Record<string, unknown>)[seg];
    else return undefined;
  }
  return cur;
}

function parseJsonOrUndefined(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
