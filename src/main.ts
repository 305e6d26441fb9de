import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { REMOTE_USAGE, runRemote } from './cli/remote-commands.js';
import type { Container } from './container.js';
import { isRole } from './auth/roles.js';

// The server and the database are loaded only by the commands that use them: the remote commands (a client of a
// running server) start in a fraction of the time without them.
const server = () => import('./server.js');
const local = async () => ({ ...(await import('./container.js')), ...(await import('./lib/logger.js')) });

const USAGE = `usage: agentry <command>
  serve                         start the roles in AGENTRY_ROLES (default api,webhooks,worker)
  keys create --org NAME [--name LABEL] [--role admin|member|read-only]
                                create an API key (default role admin; the organization if needed); prints only the key
  keys list --org NAME          the organization's keys as JSON lines, read from the database (never the keys themselves)
  keys revoke --org NAME --id KEY_ID
                                revoke a key in the database (not the organization's last active admin key)
  migrate                       apply database migrations and exit
${REMOTE_USAGE}`;

const io = {
  out: (text: string) => void process.stdout.write(text + '\n'),
  write: (text: string) => void process.stdout.write(text),
  err: (text: string) => void process.stderr.write(text + '\n'),
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { startServer } = await server();
      const running = await startServer(loadConfig());
      const shutdown = async (signal: string) => {
        running.container.log.info({ signal }, 'shutting down');
        await running.stop();
        process.exit(0);
      };
      process.once('SIGINT', () => void shutdown('SIGINT'));
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
      return -1;
    }
    case 'keys': {
      // With --org the command works on the database itself (the first key has no server to ask); without it, list and
      // revoke go to a running server with AGENTRY_URL and AGENTRY_API_KEY.
      if (rest[0] !== 'create' && !rest.includes('--org') && !rest.some((a) => a.startsWith('--org='))) return (await runRemote(argv, io)) ?? 2;
      const { values, positionals } = parseArgs({
        args: rest,
        options: { org: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, id: { type: 'string' } },
        allowPositionals: true,
      });
      const action = positionals[0];
      const valid =
        values.org &&
        ((action === 'create' && (values.role === undefined || isRole(values.role))) || action === 'list' || (action === 'revoke' && values.id));
      if (!valid) {
        process.stderr.write(USAGE + '\n');
        return 2;
      }
      const { createContainer, createLogger } = await local();
      const c = await createContainer(loadConfig(), { log: createLogger('silent') });
      try {
        return await keysCommand(c, action as 'create' | 'list' | 'revoke', values as { org: string; name?: string; role?: string; id?: string });
      } finally {
        await c.close();
      }
    }
    case 'migrate': {
      // createContainer applies migrations; nothing else to do.
      const { createContainer, createLogger } = await local();
      const c = await createContainer(loadConfig(), { log: createLogger('silent') });
      await c.close();
      process.stderr.write('migrations applied\n');
      return 0;
    }
    case 'agents':
    case 'invoke':
    case 'tasks':
      return (await runRemote(argv, io)) ?? 2;
    default:
      process.stderr.write(USAGE + '\n');
      return command ? 2 : 0;
  }
}

async function keysCommand(c: Container, action: 'create' | 'list' | 'revoke', v: { org: string; name?: string; role?: string; id?: string }): Promise<number> {
  if (action === 'create') {
    const { key } = await c.orgs.createApiKey(v.org, v.name ?? null, isRole(v.role) ? v.role : 'admin');
    process.stdout.write(key + '\n');
    return 0;
  }
  const org = await c.orgs.findOrganizationByName(v.org);
  if (!org) {
    process.stderr.write(`agentry: no organization named ${v.org}\n`);
    return 1;
  }
  if (action === 'revoke') {
    process.stdout.write(JSON.stringify(await c.apiKeys.revoke(org.id, v.id!)) + '\n');
    return 0;
  }
  for (let page = 1; ; page++) {
    const p = await c.apiKeys.list(org.id, page, 50);
    for (const k of p.items) process.stdout.write(JSON.stringify(k) + '\n');
    if (page >= p.total_pages) return 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    process.stderr.write(`agentry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
