import { GUARD_KINDS, type GuardDeps, type GuardRun } from './guard-registry.js';
import type { GuardScanner } from './guard-scanner.js';
import { guardrailSettings } from './guardrail-settings.js';
import type { GuardEvent, GuardName } from './guardrail.types.js';
import { NO_GUARD, RunGuard } from './run-guard.js';

/**
 * Builds the guards of a run from the agent's agno_settings. Events go to the task's trace as `guardrail` events;
 * they name kinds, rules and categories, never the values found.
 */
export class GuardrailService {
  constructor(private readonly deps: GuardDeps & { scanner: GuardScanner }) {}

  forRun(run: GuardRun & { report(event: GuardEvent): Promise<void> }): RunGuard {
    const settings = guardrailSettings(run.agent);
    const guards = (Object.keys(GUARD_KINDS) as GuardName[])
      .filter((k) => GUARD_KINDS[k].enabled(settings))
      .map((k) => GUARD_KINDS[k].create(settings, this.deps, run));
    return guards.length === 0 ? NO_GUARD : new RunGuard(guards, { signal: run.signal, report: run.report });
  }

  /** Texts scanned on the event loop and on a thread, and the threads alive (guard-scanner.ts). */
  scanStats(): ReturnType<GuardScanner['stats']> {
    return this.deps.scanner.stats();
  }

  /** Lets the scanning threads go (the service is stopping). */
  close(): Promise<void> {
    return this.deps.scanner.close();
  }
}
