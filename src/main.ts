import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { REMOTE_USAGE, runRemote } from './cli/remote-commands.js';

// The server and the database are loaded only by the commands that use them: the remote commands (a client of a
// running server) start in a fraction of the time without them.
const server = () => import('./server.js');
const local = async () => ({ ...(await import('./container.js')), ...(await import('./lib/logger.js')) });

const USAGE = `usage: agentry <command>
  serve                         start the roles in AGENTRY_ROLES (default api,webhooks,worker)
  keys create --org NAME [--name LABEL]
                                create an API key (and the organization if needed); prints only the key
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
      // list and revoke go to a running server; create works on the database itself (the first key has no server to ask).
      if (rest[0] !== 'create') return (await runRemote(argv, io)) ?? 2;
      const { values, positionals } = parseArgs({ args: rest, options: { org: { type: 'string' }, name: { type: 'string' } }, allowPositionals: true });
      if (positionals[0] !== 'create' || !values.org) {
        process.stderr.write(USAGE + '\n');
        return 2;
      }
      const { createContainer, createLogger } = await local();
      const c = await createContainer(loadConfig(), { log: createLogger('silent') });
      try {
        const { key } = await c.orgs.createApiKey(values.org, values.name ?? null);
        process.stdout.write(key + '\n');
      } finally {
        await c.close();
      }
      return 0;
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

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    process.stderr.write(`agentry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
