import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** SIGKILLs a child (a crash, as the durability tests need one) and resolves once it has exited; a no-op if it has. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
