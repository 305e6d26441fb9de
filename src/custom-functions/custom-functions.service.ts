import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { CustomFunctionRecord, CustomFunctionsRepository, CustomFunctionStatus } from './custom-functions.repository.js';
import { argumentSchemaProblem, validateArguments } from './json-schema.js';
import type { SandboxOutcome, SandboxPool } from './sandbox.js';
import type { SchemaChecker } from '../lib/schema-checker.js';

export interface CustomFunctionInput {
  name: string;
  description?: string | null;
  code: string;
  input_schema?: Record<string, unknown> | null;
}

export interface ExecutionResult {
  status: 'success' | 'error';
  result: unknown;
  error: string | null;
  /** Why it failed: runtime (the code threw), timeout, memory, limit (result too large), busy, internal. */
  error_kind: string | null;
  logs: string[];
  execution_time_ms: number;
}

/**
 * Custom functions: JavaScript `async function run(args)` kept per organization and run in the QuickJS sandbox.
 * Analysis (compile + load + `run` defined) happens on create and on every code change:
 * status `analysing` -> `ready` | `error` with `analysis_error_details`.
 */
export class CustomFunctionsService {
  constructor(
    private readonly repo: CustomFunctionsRepository,
    private readonly sandbox: SandboxPool,
    private readonly schemas: SchemaChecker,
    private readonly clock: Clock,
  ) {}

  async create(organizationId: string, input: CustomFunctionInput): Promise<CustomFunctionRecord> {
    const inputSchema = await this.checkedSchema(organizationId, input.input_schema);
    const now = this.clock.now();
    const record: CustomFunctionRecord = {
      id: newId(),
      organizationId,
      name: input.name,
      description: input.description ?? '',
      code: input.code,
      inputSchema,
      status: 'analysing',
      analysisErrorDetails: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.repo.insert(record);
    return this.analyse(record);
  }

  async get(organizationId: string, id: string): Promise<CustomFunctionRecord> {
    const f = await this.repo.find(organizationId, id);
    if (!f) throw AppError.notFound('Custom function');
    return f;
  }

  list(organizationId: string, page: number, perPage: number) {
    return this.repo.list(organizationId, (page - 1) * perPage, perPage);
  }

  /** The functions among `ids` that exist in the organization (agents attach them by id). */
  findMany(organizationId: string, ids: string[]): Promise<CustomFunctionRecord[]> {
    return this.repo.findMany(organizationId, ids);
  }

  async update(organizationId: string, id: string, patch: Partial<CustomFunctionInput>): Promise<CustomFunctionRecord> {
    const inputSchema = patch.input_schema === undefined ? undefined : await this.checkedSchema(organizationId, patch.input_schema);
    const current = await this.get(organizationId, id);
    const codeChanged = patch.code !== undefined && patch.code !== current.code;
    await this.repo.update(
      organizationId,
      id,
      {
        name: patch.name,
        description: patch.description === undefined ? undefined : (patch.description ?? ''),
        code: patch.code,
        inputSchema,
        ...(codeChanged ? { status: 'analysing' as const, analysisErrorDetails: null } : {}),
      },
      this.clock.now(),
    );
    const updated = await this.get(organizationId, id);
    return codeChanged ? this.analyse(updated) : updated;
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!(await this.repo.delete(organizationId, id))) throw AppError.notFound('Custom function');
  }

  /** POST /execute: argument problems are a 422; a failure inside the function is a result with status error. */
  async execute(organizationId: string, id: string, args: Record<string, unknown>): Promise<ExecutionResult> {
    const f = await this.ready(organizationId, id);
    const issues = await validateArguments(this.schemas, organizationId, f.inputSchema, args, ['body', 'args']);
    if (issues.length) throw AppError.validation(issues);
    const r = await this.runInSandbox(f, args);
    // A full queue says nothing about the function: the caller retries, as with any overloaded dependency.
    if (r.error_kind === 'busy') throw new AppError('unavailable', r.error ?? 'The function sandbox is busy', { retryAfter: 1 });
    return r;
  }

  /**
   * The runtime's call: resolves with the function's result, or throws an Error whose message is meant for the LLM
   * (bad arguments, a failure inside the function, a function that is not ready).
   */
  async call(organizationId: string, id: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    let f: CustomFunctionRecord;
    try {
      f = await this.ready(organizationId, id);
    } catch (e) {
      throw new Error(e instanceof AppError ? e.message : 'Custom function unavailable');
    }
    const issues = await validateArguments(this.schemas, organizationId, f.inputSchema, args, []);
    if (issues.length) {
      throw new Error(`Invalid arguments for ${f.name}: ${issues.map((i) => `${i.loc.join('.') || '(root)'}: ${i.msg}`).join('; ')}`);
    }
    const r = await this.runInSandbox(f, args, signal);
    if (r.status === 'error') throw new Error(`Custom function ${f.name} failed: ${r.error}`);
    return r.result;
  }

  private async checkedSchema(organizationId: string, schema: Record<string, unknown> | null | undefined): Promise<Record<string, unknown>> {
    const s = schema ?? {};
    const problem = await argumentSchemaProblem(this.schemas, organizationId, s);
    if (problem) throw AppError.invalid(['body', 'input_schema'], problem);
    return s;
  }

  private async ready(organizationId: string, id: string): Promise<CustomFunctionRecord> {
    let f = await this.get(organizationId, id);
    // A record left `analysing` (the process stopped mid-analysis, or the sandbox was busy) is analysed now.
    if (f.status === 'analysing') f = await this.analyse(f);
    if (f.status !== 'ready') {
      throw new AppError('conflict', `Custom function is not ready: ${f.analysisErrorDetails ?? 'analysis has not finished'}`);
    }
    return f;
  }

  private async runInSandbox(f: CustomFunctionRecord, args: Record<string, unknown>, signal?: AbortSignal): Promise<ExecutionResult> {
    const started = this.clock.now();
    const outcome = await this.sandbox.run(f.organizationId, f.code, args, signal);
    const execution_time_ms = Math.max(0, this.clock.now() - started);
    if (outcome.ok) return { status: 'success', result: outcome.result, error: null, error_kind: null, logs: outcome.logs, execution_time_ms };
    return { status: 'error', result: null, error: outcome.error, error_kind: outcome.kind, logs: outcome.logs, execution_time_ms };
  }

  private async analyse(f: CustomFunctionRecord): Promise<CustomFunctionRecord> {
    const outcome = await this.sandbox.analyse(f.organizationId, f.code);
    const verdict = analysisVerdict(outcome);
    if (verdict) {
      await this.repo.setAnalysis(f.organizationId, f.id, f.code, verdict.status, verdict.details, this.clock.now());
    }
    return (await this.repo.find(f.organizationId, f.id)) ?? f;
  }
}

/** Busy or broken sandboxes say nothing about the code: the function stays `analysing` and is analysed again later. */
function analysisVerdict(outcome: SandboxOutcome): { status: CustomFunctionStatus; details: string | null } | undefined {
  if (outcome.ok) return { status: 'ready', details: null };
  if (outcome.kind === 'busy' || outcome.kind === 'internal') return undefined;
  const prefix = outcome.kind === 'syntax' ? 'Syntax error: ' : outcome.kind === 'invalid' ? '' : 'Loading the code failed: ';
  return { status: 'error', details: prefix + outcome.error };
}
