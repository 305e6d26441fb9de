/**
 * Another process reading tasks, for tests of what two processes do at once: opens the database of the
 * environment it is given, prints `ready`, waits for a line on stdin, lists the agent's tasks (which settles the
 * task inbox) and prints `{"total": n}`.
 *
 *   node --import tsx test/support/list-tasks-process.ts <organization id> <agent id>
 */
import { createInterface } from 'node:readline';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/lib/logger.js';

const [orgId, agentId] = process.argv.slice(2) as [string, string];
const c = await createContainer(loadConfig({ ...process.env, AGENTRY_ROLES: 'api' } as Record<string, string>), { log: createLogger('silent') });
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once('line', resolve));
const page = await c.tasks.queries.list(orgId, { agentId }, 1, 1);
process.stdout.write(JSON.stringify({ total: page.total }) + '\n');
await c.close();
process.exit(0);
