import type { Kysely } from 'kysely';
import type { SecretBox } from '../../lib/secret-box.js';
import type { MigrationDef } from './migration.js';

/**
 * Seals every clear value of `llm_extra_headers` in stored agent configurations: the published and draft copies
 * of `agents` and every immutable `agent_versions` row (issue 20: the agents domain now seals them all on write,
 * as `{"$sealed": "v1:..."}`, earlier only the ones named like credentials). Self-contained on purpose: a shipped
 * migration must not change when the agents domain's sealing code does.
 *
 * It needs the master key (MigrationContext.secretBox); without one it fails only if a row actually needs sealing,
 * so tools that migrate an empty database need none.
 */

const PAGE = 200;

export const sealLlmExtraHeaders0012: MigrationDef = {
  name: '0012_seal_llm_extra_headers',
  async up(db, _dialect, ctx) {
    const seal = (text: string | null) => sealConfigText(text, ctx.secretBox);
    let lastId = '';
    for (;;) {
      const rows = await db.selectFrom('agents').select(['id', 'config', 'draft']).where('id', '>', lastId).orderBy('id').limit(PAGE).execute();
      for (const r of rows) {
        const config = seal(r.config);
        const draft = seal(r.draft);
        if (config !== undefined || draft !== undefined) {
          await db
            .updateTable('agents')
            .set({ ...(config !== undefined && { config }), ...(draft !== undefined && { draft }) })
            .where('id', '=', r.id)
            .execute();
        }
      }
      if (rows.length < PAGE) break;
      lastId = rows[rows.length - 1].id;
    }
    await sealVersions(db, seal);
  },
};

async function sealVersions(db: Kysely<any>, seal: (text: string | null) => string | undefined): Promise<void> {
  let after: { agentId: string; version: number } | undefined;
  for (;;) {
    let q = db.selectFrom('agent_versions').select(['agent_id', 'version', 'config']);
    if (after) {
      const a = after;
      q = q.where((eb) => eb.or([eb('agent_id', '>', a.agentId), eb.and([eb('agent_id', '=', a.agentId), eb('version', '>', a.version)])]));
    }
    const rows = await q.orderBy('agent_id').orderBy('version').limit(PAGE).execute();
    for (const r of rows) {
      const config = seal(r.config);
      if (config !== undefined) {
        await db.updateTable('agent_versions').set({ config }).where('agent_id', '=', r.agent_id).where('version', '=', r.version).execute();
      }
    }
    if (rows.length < PAGE) break;
    const last = rows[rows.length - 1];
    after = { agentId: last.agent_id, version: Number(last.version) };
  }
}

/** The configuration text with its clear header values sealed; undefined when nothing needed sealing. */
function sealConfigText(text: string | null, box: SecretBox | undefined): string | undefined {
  if (!text) return undefined;
  const config = JSON.parse(text) as Record<string, unknown>;
  const headers = config.llm_extra_headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return undefined;
  const clear = Object.entries(headers).filter(([, v]) => typeof v === 'string');
  if (clear.length === 0) return undefined;
  if (!box) throw new Error('migration 0012_seal_llm_extra_headers needs the master key to seal stored llm_extra_headers');
  const sealed: Record<string, unknown> = { ...(headers as Record<string, unknown>) };
  for (const [name, v] of clear) sealed[name] = { $sealed: box.seal(v as string) };
  return JSON.stringify({ ...config, llm_extra_headers: sealed });
}
