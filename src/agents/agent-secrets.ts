import { AppError } from '../errors.js';
import { REDACTED, type SecretBox } from '../lib/secret-box.js';

/**
 * Write-only values inside an agent configuration (docs/contract.md#secrets): stored sealed as `{"$sealed": "v1:..."}`,
 * shown as "********", revealed only for the runtime (AgentsService.getRunnable).
 *
 * Sealed: `llm_credentials.value`, and every string under a credential-like key (api_key, client_secret, password,
 * token, ...) anywhere inside `tools` entries, `graph` items and `connectivity_details`: the tool-kind resolvers can
 * put an inline MCP server's key into graph settings without sealing it themselves. In header maps (`headers`,
 * `custom_headers`) the entries whose name carries a credential (Authorization, X-Api-Key, Helicone-Auth, ...) are
 * sealed; the others stay readable. Every value of `llm_extra_headers` is sealed: those headers exist to reach an LLM
 * endpoint or gateway, whose credential headers have names no pattern foresees (issue 20 found them in clear).
 * Writing "********" back (a configuration read and sent again) keeps the stored value; "********" where nothing is
 * stored is refused (422): sealing the placeholder would store a credential that fails every call. A header left out
 * of a PATCH is dropped, as the map is replaced whole. The stored value behind a "********" is looked up in the same
 * element: a `tools` entry or `graph` item is matched to the stored one by what it is (its kind and what it points
 * at: an inline MCP server's url and name), not by its position, so a reordered or shortened list never hands one
 * server's key to another, and a changed url never takes the stored key along. An inline MCP item seals every header
 * value (mcp-graph.ts), so all of them are write-only here too.
 */

const SECRET_KEYS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'client_secret',
  'password',
  'token',
  'access_token',
  'refresh_token',
  'secret',
  'bearer_token',
]);

const ROOTS = ['tools', 'graph', 'connectivity_details'] as const;

/** Header maps (MCP `headers`, A2A `custom_headers`, `llm_extra_headers`) whose sensitive entries are sealed. */
const HEADER_MAPS: ReadonlySet<string> = new Set(['headers', 'custom_headers', 'llm_extra_headers']);
/** Header names that carry credentials (Authorization, X-Api-Key, Helicone-Auth, Cookie, ...). */
const SECRET_HEADER = /auth|key|token|secret|cookie|password|signature|credential/i;

type Path = (string | number)[];

/** What a `tools` entry or `graph` item is, to find its stored counterpart (undefined: not an entry, matched by position). */
const IDENTITY: Readonly<Record<string, (v: unknown) => string | undefined>> = {
  tools: (v) => {
    const e = asJson(v);
    if (!e || typeof e.type !== 'string') return undefined;
    return JSON.stringify([e.type, e.mcp_id, e.url, e.name, e.connection_id, e.custom_function_id, e.agent_id, e.workflow_id, e.skill_name]);
  },
  graph: (v) => {
    const g = asJson(v);
    return g && typeof g.type === 'string' && typeof g.item_id === 'string' ? JSON.stringify([g.type, g.sub_type ?? null, g.item_id]) : undefined;
  },
};

function asJson(v: unknown): Json | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

/** The stored counterpart of `value`, the element `i` of an array at `path`. */
function previousElement(value: unknown, prev: unknown, i: number, path: Path): unknown {
  if (!Array.isArray(prev)) return undefined;
  const identity = path.length === 1 ? IDENTITY[String(path[0])] : undefined;
  const key = identity?.(value);
  return key === undefined ? prev[i] : prev.find((p) => identity!(p) === key);
}

/** A secret as stored: the previous sealed value for "********", else the value sealed. */
function sealOne(v: string, prev: unknown, box: SecretBox, path: Path): unknown {
  if (v !== REDACTED) return { $sealed: box.seal(v) };
  if (isSealed(prev)) return prev;
  throw AppError.invalid(['body', ...path], `"${REDACTED}" stands for a stored secret, and none is stored here: send the real value`);
}

function sealHeaderMap(value: Json, prev: Json | undefined, box: SecretBox, path: Path, every = false): Json {
  const out: Json = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v === 'string' && (every || SECRET_HEADER.test(name))) out[name] = sealOne(v, prev?.[name], box, [...path, name]);
    else out[name] = v;
  }
  return out;
}

interface Sealed {
  $sealed: string;
}

export function isSealed(v: unknown): v is Sealed {
  return !!v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Sealed).$sealed === 'string' && Object.keys(v).length === 1;
}

type Json = Record<string, unknown>;

function sealDeep(value: unknown, prev: unknown, box: SecretBox, keys: ReadonlySet<string>, path: Path): unknown {
  if (Array.isArray(value)) return value.map((v, i) => sealDeep(v, previousElement(v, prev, i, path), box, keys, [...path, i]));
  if (!value || typeof value !== 'object' || isSealed(value)) return value;
  const out: Json = {};
  const p = prev && typeof prev === 'object' && !Array.isArray(prev) ? (prev as Json) : undefined;
  for (const [k, v] of Object.entries(value as Json)) {
    if (keys.has(k.toLowerCase()) && typeof v === 'string') {
      out[k] = sealOne(v, p?.[k], box, [...path, k]);
    } else if (HEADER_MAPS.has(k) && v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = sealHeaderMap(v as Json, p?.[k] as Json | undefined, box, [...path, k], path[path.length - 1] === 'mcp_settings');
    } else out[k] = sealDeep(v, p?.[k], box, keys, [...path, k]);
  }
  return out;
}

function mapSealed(value: unknown, fn: (s: Sealed) => unknown): unknown {
  if (isSealed(value)) return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapSealed(v, fn));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, mapSealed(v, fn)]));
}

/** Seals plain secrets of `config` (values already sealed stay); `previous` is the stored config being edited. */
export function sealSecrets<T extends Json>(config: T, box: SecretBox, previous?: Json): T {
  const out: Json = { ...config };
  for (const root of ROOTS) if (root in out) out[root] = sealDeep(out[root], previous?.[root], box, SECRET_KEYS, [root]);
  // Slack incoming-webhook URLs carry their own credential (docs/notifications.md).
  if (out.notification_settings) out.notification_settings = sealDeep(out.notification_settings, previous?.notification_settings, box, new Set(['webhook_url']), ['notification_settings']);
  if (out.llm_credentials) out.llm_credentials = sealDeep(out.llm_credentials, previous?.llm_credentials, box, new Set(['value']), ['llm_credentials']);
  if (out.llm_extra_headers && typeof out.llm_extra_headers === 'object') {
    out.llm_extra_headers = sealHeaderMap(out.llm_extra_headers as Json, previous?.llm_extra_headers as Json | undefined, box, ['llm_extra_headers'], true);
  }
  return out as T;
}

/** For responses: every sealed value becomes "********". */
export function redactSecrets<T extends Json>(stored: T): T {
  return mapSealed(stored, () => REDACTED) as T;
}

/** For the runtime only: every sealed value opened (null when it cannot be opened, e.g. a different master key). */
export function revealSecrets<T extends Json>(stored: T, box: SecretBox): T {
  return mapSealed(stored, (s) => {
    try {
      return box.open(s.$sealed);
    } catch {
      return null;
    }
  }) as T;
}
