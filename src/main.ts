import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { createContainer } from './container.js';
import { createLogger } from './lib/logger.js';
import { startServer } from './server.js';
import { isRole } from './auth/roles.js';

const USAGE = `usage: agentry <command>
  serve                         start the roles in AGENTRY_ROLES (default api,webhooks,worker)
  keys create --org NAME [--name LABEL] [--role admin|member|read-only]
                                create an API key (default role admin; the organization if needed); prints only the key
  migrate                       apply database migrations and exit`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const server = await startServer(loadConfig());
      const shutdown = async (signal: string) => {
        server.container.log.info({ signal }, 'shutting down');
        await server.stop();
        process.exit(0);
      };
      process.once('SIGINT', () => void shutdown('SIGINT'));
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
      return -1;
    }
    case 'keys': {
      const { values, positionals } = parseArgs({ args: rest, options: { org: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' } }, allowPositionals: true });
      if (positionals[0] !== 'create' || !values.org || (values.role !== undefined && !isRole(values.role))) {
        process.stderr.write(USAGE + '\n');
        return 2;
      }
      const c = await createContainer(loadConfig(), { log: createLogger('silent') });
      try {
        const { key } = await c.orgs.createApiKey(values.org, values.name ?? null, isRole(values.role) ? values.role : 'admin');
        process.stdout.write(key + '\n');
      } finally {
        await c.close();
      }
      return 0;
    }
    case 'migrate': {
      // createContainer applies migrations; nothing else to do.
      const c = await createContainer(loadConfig(), { log: createLogger('silent') });
      await c.close();
      process.stderr.write('migrations applied\n');
      return 0;
    }
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
