/** What the scenarios need from a running service: the bench key, an agent and its public URL, task counts, a fresh store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDatabase } from '../test/support/databases.js';
import { json, type Service } from './lib.js';

export const KEY = 'agk_bench_key_0123456789abcdef';

/**
 * How every benchmark configures the service: the bench key, a fixed master key, loopback egress for the scripted
 * LLMs, and rate limits left on (their cost is part of what is measured) but far above what the load generator sends.
 */
export const SERVICE_ENV: Record<string, string> = {
  AGENTRY_BOOTSTRAP_API_KEY: KEY,
  AGENTRY_MASTER_KEY: 'b'.repeat(64),
  AGENTRY_EGRESS_ALLOW: '127.0.0.1',
  AGENTRY_RATE_LIMIT_KEY_PER_SECOND: '10000000',
  AGENTRY_RATE_LIMIT_KEY_BURST: '10000000',
  AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND: '10000000',
  AGENTRY_RATE_LIMIT_WEBHOOK_BURST: '10000000',
};

export async function setupAgent(svc: Service, llmUrl: string, name = 'Bench agent'): Promise<{ id: string; publicUrl: string }> {
  const agent = await json(`${svc.api}/v1/agents`, {
    method: 'POST',
    key: KEY,
    body: {
      name,
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      llm_api_base: llmUrl,
      llm_credentials: { name: 'bench', value: 'sk-bench' },
      output_format: 'text',
      should_stage_before_publish: false,
    },
  });
  const wh = await json(`${svc.api}/v1/agents/${agent.id}/webhook`, { method: 'POST', key: KEY });
  const publicUrl = wh.url.replace(/^https?:\/\/[^/]+/, svc.webhook);
  return { id: agent.id, publicUrl };
}

export async function countTasks(svc: Service, agentId: string, status: string): Promise<number> {
  return (await json(`${svc.api}/v1/tasks?agent_id=${agentId}&status=${status}&per_page=1`, { key: KEY })).total;
}

/**
 * Tasks waiting to run (pending in `tasks` plus the task inbox) and this process's completed runs, from /metrics: unlike
 * a task list, reading them moves nothing, so a backlog measured after it is still where sustained acceptance leaves
 * it (mostly in the inbox) rather than just moved into `tasks` in one go.
 */
export async function queueDepth(svc: Service, agentId: string): Promise<{ waiting: number; completed: number }> {
  const res = await fetch(`${svc.api}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics -> ${res.status}`);
  const text = await res.text();
  const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    waiting: value('agentry_tasks{status="pending"}') + value('agentry_task_inbox_depth'),
    completed: value(`agentry_tasks_finished_total{agent_id="${agentId}",status="completed"}`),
  };
}

export interface Store {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A fresh database and data directory, for a scenario that must not inherit the tasks earlier ones left. */
export async function freshStore(db: 'sqlite' | 'postgres', base: Record<string, string>): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'agentry-bench-'));
  const pgdb = db === 'postgres' ? await createPgDatabase() : undefined;
  return {
    env: { ...base, AGENTRY_DATA_DIR: dir, ...(pgdb ? { DATABASE_URL: pgdb.url } : {}) },
    async drop() {
      await pgdb?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
