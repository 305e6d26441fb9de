import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import type { DbKind, TestApp } from './harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** SIGKILLs a child (a crash, as the durability tests need one) and resolves once it has exited; a no-op if it has. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/**
 * Worker processes (`agentry serve` with AGENTRY_ROLES=worker) on a test app's database, for the crash tests: spawned,
 * found by the task lease they hold, SIGKILLed. `app` is read at spawn time (the suite creates it in beforeAll); `env`
 * is added to the app's environment for every worker. A worker that exits with an error rather than a kill prints its
 * stderr; H3A_DEBUG=1 shows its debug log.
 */
export class WorkerProcesses {
  private readonly children: ChildProcess[] = [];

  constructor(
    private readonly app: () => Pick<TestApp, 'testEnv' | 'c'>,
    private readonly env: Record<string, string> = {},
  ) {}

  spawn(env: Record<string, string> = {}): ChildProcess {
    const debug = Boolean(process.env.H3A_DEBUG);
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), 'serve'], {
      cwd: ROOT,
      env: { ...process.env, ...this.app().testEnv.env, AGENTRY_ROLES: 'worker', AGENTRY_LOG_LEVEL: debug ? 'debug' : 'warn', ...this.env, ...env },
      stdio: ['ignore', debug ? 'inherit' : 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('exit', (code, signal) => {
      if (code && signal !== 'SIGKILL') console.error(`worker exited ${code}: ${stderr}`);
    });
    this.children.push(child);
    return child;
  }

  /** The spawned worker holding a task: its lease owner is `host:pid:random`. Throws when no spawned worker holds it. */
  async holderOf(taskId: string): Promise<ChildProcess> {
    const row = await this.app().c.db.kysely.selectFrom('tasks').select('lease_owner').where('id', '=', taskId).executeTakeFirstOrThrow();
    const pid = Number(row.lease_owner?.split(':')[1]);
    const child = this.children.find((w) => w.pid === pid);
    if (!child) throw new Error(`task ${taskId} is held by ${row.lease_owner}, not by a spawned worker`);
    return child;
  }

  /** For afterEach: every worker of the test is gone before the next one starts. */
  async killAll(): Promise<void> {
    for (const w of this.children.splice(0)) await killHard(w);
  }
}

/**
 * A crash suite's world: in beforeAll a scripted LLM and the in-process API, with no worker of its own (only the
 * suite's spawned `workers` run tasks) and a 5 s lease, long enough for a heavily loaded CI machine (heartbeats every
 * third of it), short enough to recover fast; both are handed to `use`. The workers are killed after each test, the
 * app and the LLM closed in afterAll.
 */
export function crashSuite(kind: DbKind, workers: WorkerProcesses, use: (t: TasksApp, llm: ScriptedLlmServer) => void): void {
  let app: TasksApp | undefined;
  let llm: ScriptedLlmServer | undefined;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    app = await createTasksApp(kind, { worker: false, env: { AGENTRY_TASK_LEASE_MS: '5000' } });
    use(app, llm);
  });
  afterEach(() => workers.killAll());
  afterAll(async () => {
    await app?.close();
    await llm?.close();
  });
}
