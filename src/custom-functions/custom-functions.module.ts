import type { ToolResolverRegistry } from '../agents/tool-resolvers/index.js';
import { CustomFunctionToolResolver } from '../agents/tool-resolvers/custom-function.resolver.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { closeOnStop, type Startable } from '../lib/lifecycle.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import type { Runtime } from '../runtime/runtime.js';
import { CustomFunctionToolProvider } from '../runtime/tools/custom-function.tools.js';
import { CustomFunctionsRepository } from './custom-functions.repository.js';
import { CustomFunctionsService } from './custom-functions.service.js';
import { SandboxPool } from './sandbox.js';

/** Custom functions (issue 6): the service, its sandbox threads, the `custom_function` tool kind. */
export function createCustomFunctionsModule(d: {
  db: Db;
  config: Config;
  clock: Clock;
  schemaChecker: SchemaChecker;
  toolResolvers: ToolResolverRegistry;
  runtime: Runtime;
}): { customFunctions: CustomFunctionsService; sandbox: Startable } {
  const sandbox = new SandboxPool({
    size: d.config.sandbox.threads,
    limits: { timeoutMs: d.config.sandbox.timeoutMs, memoryBytes: d.config.sandbox.memoryBytes },
    maxQueuePerOrg: d.config.sandbox.maxQueuePerOrg,
  });
  const customFunctions = new CustomFunctionsService(new CustomFunctionsRepository(d.db), sandbox, d.schemaChecker, d.clock);
  d.toolResolvers.custom_function = new CustomFunctionToolResolver(customFunctions);
  d.runtime.tools.register('custom_function', new CustomFunctionToolProvider(customFunctions));
  return { customFunctions, sandbox: closeOnStop(() => sandbox.close()) };
}
