import type { RunOutcome, RunRequest, TaskRunner } from './task-runner.js';

/**
 * The TaskRunner the worker calls: it picks the runner of the agent's `type` (`a2a`, `curl`: external agents called
 * over HTTP, registered by their domain's module) and falls back to the LLM runner (`manager`, `regular`).
 * Everything around a run (queue, lease, retries, stop, trace, webhooks, streams, sub-agent calls) stays the
 * worker's, so an external agent is an ordinary task.
 */
export class AgentTypeRunners implements TaskRunner {
  private readonly byType = new Map<string, TaskRunner>();

  constructor(private readonly fallback: TaskRunner) {}

  register(type: string, runner: TaskRunner): void {
    this.byType.set(type, runner);
  }

  run(req: RunRequest): Promise<RunOutcome> {
    const runner = this.byType.get(req.agent.type) ?? this.fallback;
    return runner.run(req);
  }
}
