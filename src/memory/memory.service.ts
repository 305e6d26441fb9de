import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { EmbeddingProvider } from '../knowledge/embeddings.js';
import { fuse, queryTerms } from '../knowledge/ranking.js';
import type { Embedded, MemoryFilter, MemoryRepository, MemoryRow } from './memory.repository.js';

/** Bounds: a memory is one short fact; an agent keeps at most this many per user and shared. */
export const MEMORY_LIMITS = {
  contentChars: 1000,
  perUser: 100,
  perAgent: 200,
  /** Memories placed in one run's system prompt, and the characters they may take. */
  recalled: 10,
  recalledChars: 4000,
};

export type MemorySource = 'extracted' | 'agentic' | 'api';

export interface Memory {
  id: string;
  agentId: string;
  userId: string | null;
  content: string;
  source: string;
  taskId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Where a route found the memory: under an agent, or under a user. A memory outside it is "not found". */
export type MemoryScope = { agentId: string } | { userId: string };

/** One extraction's or tool call's changes, applied together. */
export interface MemoryChanges {
  add: string[];
  update: { id: string; content: string }[];
  delete: string[];
}

export interface AppliedChanges {
  added: string[];
  updated: string[];
  deleted: string[];
  /** Changes refused: unknown ids, empty text, over the cap. */
  skipped: string[];
}

export interface AgentLookup {
  exists(organizationId: string, agentId: string): Promise<boolean>;
}

/**
 * Memories of agents: user memories (`userId` set) and agent memories shared by every user (`userId` null). The
 * API edits them; runs recall them (lexical rank for the task's text, then the newest) and change them (after a
 * task, or through the agentic memory tools). Every change is bounded by MEMORY_LIMITS.
 */
export class MemoryService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly agents: AgentLookup,
    private readonly clock: Clock,
    /** The knowledge bases' embedding endpoint, when configured: recall then fuses vector and lexical ranks. */
    private readonly embeddings?: EmbeddingProvider,
  ) {}

  /** `scope` agent: the shared memories; user: memories about users (one user's with `userId`); neither: all. */
  async listForAgent(org: string, agentId: string, filter: { userId?: string; scope?: 'user' | 'agent' }, page: number, perPage: number) {
    await this.requireAgent(org, agentId);
    if (filter.scope === 'agent') return this.page(org, { agentId, userId: null }, page, perPage);
    if (filter.userId !== undefined) return this.page(org, { agentId, userId: filter.userId }, page, perPage);
    return this.page(org, { agentId, usersOnly: filter.scope === 'user' }, page, perPage);
  }

  async listForUser(org: string, userId: string, filter: { agentId?: string }, page: number, perPage: number) {
    return this.page(org, { userId, agentId: filter.agentId }, page, perPage);
  }

  async get(org: string, scope: MemoryScope, id: string): Promise<Memory> {
    if ('agentId' in scope) await this.requireAgent(org, scope.agentId);
    const row = await this.repo.find(org, id);
    if (!row || !inScope(row, scope)) throw AppError.notFound('Memory');
    return toMemory(row);
  }

  async create(org: string, input: { agentId: string; userId: string | null; content: string; source: MemorySource; taskId?: string | null }): Promise<Memory> {
    await this.requireAgent(org, input.agentId);
    const content = clean(input.content);
    if (!content) throw AppError.invalid(['body', 'content'], 'content must not be empty');
    const [embedded] = await this.embed([content]);
    const now = this.clock.now();
    const row = {
      ...embedded!,
      id: newId(),
      organization_id: org,
      agent_id: input.agentId,
      user_id: input.userId,
      content,
      source: input.source,
      task_id: input.taskId ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.repo.transaction(async (k) => {
      await this.repo.lockOwner(k, org, input.agentId, input.userId);
      if ((await this.repo.count(org, { agentId: input.agentId, userId: input.userId }, k)) >= capOf(input.userId)) {
        throw new AppError('conflict', `Memory limit reached (${capOf(input.userId)} ${input.userId === null ? 'agent memories' : 'memories per user'}): delete some first`);
      }
      await this.repo.insert(row, k);
    });
    return toMemory({ ...row, seq: 0 });
  }

  async update(org: string, scope: MemoryScope, id: string, content: string): Promise<Memory> {
    const current = await this.get(org, scope, id);
    const text = clean(content);
    if (!text) throw AppError.invalid(['body', 'content'], 'content must not be empty');
    const [embedded] = await this.embed([text]);
    const now = this.clock.now();
    if (!(await this.repo.update(org, id, text, embedded!, now))) throw AppError.notFound('Memory');
    return { ...current, content: text, updatedAt: now };
  }

  async delete(org: string, scope: MemoryScope, id: string): Promise<void> {
    await this.get(org, scope, id);
    if (!(await this.repo.delete(org, id))) throw AppError.notFound('Memory');
  }

  /**
   * The memories a run of `agentId` for `userId` recalls: the user's (when `user`) and the shared ones (when
   * `shared`). All of them while they fit; past that, those the task's text matches best (see rank), then the
   * newest.
   */
  async recall(org: string, agentId: string, userId: string | null, query: string, which: { user: boolean; shared: boolean }): Promise<Memory[]> {
    const owners: (string | null)[] = [...(which.user && userId ? [userId] : []), ...(which.shared ? [null] : [])];
    if (!owners.length) return [];
    const max = MEMORY_LIMITS.recalled;
    const chosen = new Map<string, MemoryRow>();
    const ranked = await this.rank(org, agentId, owners, query, max);
    for (const row of await this.repo.findMany(org, ranked)) chosen.set(row.id, row);
    const byRank = ranked.map((id) => chosen.get(id)).filter((r): r is MemoryRow => !!r);
    const recent: MemoryRow[] = [];
    for (const owner of owners) recent.push(...(await this.repo.list(org, { agentId, userId: owner }, 0, max)));
    recent.sort((a, b) => b.updated_at - a.updated_at);
    const out: MemoryRow[] = [...byRank];
    for (const r of recent) if (out.length < max && !out.some((o) => o.id === r.id)) out.push(r);
    let chars = 0;
    return out
      .filter((r) => (chars += r.content.length) <= MEMORY_LIMITS.recalledChars)
      .map(toMemory);
  }

  /**
   * Applies one batch of changes to the memories of (agent, owner) in one transaction: a crash leaves all or none
   * of them. Ids that are not the owner's are skipped, so a model cannot reach another user's memories.
   */
  async apply(org: string, agentId: string, userId: string | null, changes: MemoryChanges, source: MemorySource, taskId: string | null): Promise<AppliedChanges> {
    const [r] = await this.applyAll(org, agentId, [{ userId, changes }], source, taskId);
    return r!;
  }

  /** Several owners' batches (an extraction's user and shared changes) in one transaction. */
  async applyAll(org: string, agentId: string, batches: { userId: string | null; changes: MemoryChanges }[], source: MemorySource, taskId: string | null): Promise<AppliedChanges[]> {
    // Vectors are fetched before the transaction: no network call while it holds the database.
    const texts = [...new Set(batches.flatMap((b) => [...b.changes.add, ...b.changes.update.map((u) => u.content)].map(clean).filter(Boolean)))];
    const vectors = new Map((await this.embed(texts)).map((e, i) => [texts[i]!, e]));
    const embedded = (text: string): Embedded => vectors.get(text) ?? { embedding: null, embedding_model: null };
    const now = this.clock.now();
    return this.repo.transaction(async (k) => {
      // Every owner locked up front, in one order, so two extractions touching the same owners cannot deadlock.
      for (const owner of [...new Set(batches.map((b) => b.userId ?? ''))].sort()) await this.repo.lockOwner(k, org, agentId, owner || null);
      const out: AppliedChanges[] = [];
      for (const b of batches) out.push(await this.applyIn(k, org, agentId, b.userId, b.changes, source, taskId, now, embedded));
      return out;
    });
  }

  private async applyIn(
    k: Kysely<Database>,
    org: string,
    agentId: string,
    userId: string | null,
    changes: MemoryChanges,
    source: MemorySource,
    taskId: string | null,
    now: number,
    embedded: (text: string) => Embedded,
  ): Promise<AppliedChanges> {
    const result: AppliedChanges = { added: [], updated: [], deleted: [], skipped: [] };
    const owned = async (id: string) => {
      const row = await this.repo.find(org, id, k);
      return row && row.agent_id === agentId && row.user_id === userId;
    };
    for (const id of changes.delete) {
      if ((await owned(id)) && (await this.repo.delete(org, id, k))) result.deleted.push(id);
      else result.skipped.push(`delete ${id}: no such memory`);
    }
    for (const u of changes.update) {
      const text = clean(u.content);
      if (text && (await owned(u.id)) && (await this.repo.update(org, u.id, text, embedded(text), now, k))) result.updated.push(u.id);
      else result.skipped.push(`update ${u.id}: no such memory or empty text`);
    }
    let count = await this.repo.count(org, { agentId, userId }, k);
    for (const raw of changes.add) {
      const text = clean(raw);
      if (!text) continue;
      if (count >= capOf(userId)) {
        result.skipped.push(`add: limit of ${capOf(userId)} memories reached`);
        continue;
      }
      const id = newId();
      await this.repo.insert({ ...embedded(text), id, organization_id: org, agent_id: agentId, user_id: userId, content: text, source, task_id: taskId, created_at: now, updated_at: now }, k);
      result.added.push(id);
      count++;
    }
    return result;
  }

  /** Whose memory `id` is (a user id, or null for shared) when it is one of `agentId`'s; undefined otherwise. */
  async ownerOf(org: string, agentId: string, id: string): Promise<string | null | undefined> {
    const row = await this.repo.find(org, id);
    return row && row.agent_id === agentId ? row.user_id : undefined;
  }

  /**
   * Lexical rank (the database's full-text engine), fused by reciprocal rank with vector similarity when embeddings
   * are configured, as knowledge-base search does. A failing embedding call costs only the vector half.
   */
  private async rank(org: string, agentId: string, owners: (string | null)[], query: string, max: number): Promise<string[]> {
    const lexical = await this.repo.lexical(org, agentId, owners, queryTerms(query), max);
    if (!this.embeddings || !query.trim()) return lexical;
    let vector: string[] = [];
    try {
      const [q] = await this.embeddings.embed([query], AbortSignal.timeout(10_000), 0);
      vector = await this.repo.vector(org, agentId, owners, this.embeddings.model, q!, max);
    } catch {
      return lexical;
    }
    // fuse() ranks numeric keys: positions in one list of every id seen.
    const ids = [...new Set([...lexical, ...vector])];
    const key = (id: string) => ({ seq: ids.indexOf(id) });
    return fuse([lexical.map(key), vector.map(key)], max).map((r) => ids[r.seq]!);
  }

  /** Vectors for texts, or nulls (no endpoint, or it failed: such memories are found lexically only). */
  private async embed(texts: string[]): Promise<Embedded[]> {
    const none = texts.map(() => ({ embedding: null, embedding_model: null }));
    if (!this.embeddings || !texts.length) return none;
    try {
      const vectors = await this.embeddings.embed(texts, AbortSignal.timeout(30_000), 0);
      return vectors.map((v) => ({ embedding: v, embedding_model: this.embeddings!.model }));
    } catch {
      return none;
    }
  }

  private async page(org: string, f: MemoryFilter, page: number, perPage: number): Promise<{ items: Memory[]; total: number }> {
    const [rows, total] = await Promise.all([this.repo.list(org, f, (page - 1) * perPage, perPage), this.repo.count(org, f)]);
    return { items: rows.map(toMemory), total };
  }

  private async requireAgent(org: string, agentId: string): Promise<void> {
    if (!(await this.agents.exists(org, agentId))) throw AppError.notFound('Agent');
  }
}

function capOf(userId: string | null): number {
  return userId === null ? MEMORY_LIMITS.perAgent : MEMORY_LIMITS.perUser;
}

/** One line of plain text, NUL-free, within the size bound (a model may write more than asked). */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, MEMORY_LIMITS.contentChars);
}

function inScope(row: MemoryRow, scope: MemoryScope): boolean {
  return 'agentId' in scope ? row.agent_id === scope.agentId : row.user_id === scope.userId;
}

function toMemory(r: MemoryRow): Memory {
  return { id: r.id, agentId: r.agent_id, userId: r.user_id, content: r.content, source: r.source, taskId: r.task_id, createdAt: r.created_at, updatedAt: r.updated_at };
}
