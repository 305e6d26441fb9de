/**
 * A worker process's scheduler, for tests of several processes firing schedules on one database: opens the database
 * of the environment it is given with a clock the test sets, prints `ready`, then for each line `tick <epoch ms>`
 * sets the clock, runs one scan and prints `{"fired": n}`; `exit` ends it.
 *
 *   node --import tsx test/schedules/scheduler-process.ts
 */
import { createInterface } from 'node:readline';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/lib/logger.js';
import { ManualClock } from './schedules-harness.js';

const clock = new ManualClock(0);
const c = await createContainer(loadConfig({ ...process.env, AGENTRY_ROLES: 'worker' } as Record<string, string>), { clock, log: createLogger('silent') });
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, at] = line.trim().split(' ');
  if (cmd !== 'tick') break;
  clock.t = Number(at);
  process.stdout.write(JSON.stringify({ fired: await c.scheduler.tick() }) + '\n');
}
await c.close();
process.exit(0);
