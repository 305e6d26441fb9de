import { callDepthOf } from '../../tasks/call-depth.js';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Container } from '../../container.js';
import { userTokenOf } from '../../auth/pre-auth-token.js';
import type { Principal } from '../../auth/principal.js';
import type { TaskSubmission } from '../../tasks/task.types.js';
import { AgentIdParams, InvokeBody, InvokeQuery } from '../../tasks/tasks.schemas.js';
import { qs, type Router } from '../router.js';
import { sendEventStream } from './task-stream.js';
import { InvokeMultipart, readMultipartInvoke, type MultipartInvoke } from './invoke-multipart.js';

const SyncInvokeQuery = InvokeQuery.extend({ asynchronous: qs.bool().default(false) });

/** POST /v1/agents/{id}/invoke (waits), /invoke/async (the pending task), /invoke/stream (SSE of the run's events). */
export function invokeRoutes(router: Router, c: Container): void {
  // Optional only because a multipart body (files attached: invoke-multipart.ts) reaches the handler as no body.
  const spec = { body: InvokeBody.optional(), bodyDocs: { 'multipart/form-data': InvokeMultipart }, query: InvokeQuery, params: AgentIdParams, tags: ['tasks'] };

  /** The JSON body, or the multipart form with its files stored (under `newTaskId`); `discard` undoes them for a refused call. */
  const bodyOf = async (request: FastifyRequest, principal: Principal, json: InvokeBody | undefined): Promise<MultipartInvoke> => {
    if (request.isMultipart()) return readMultipartInvoke(request, c, principal.organizationId);
    if (!json) throw AppError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    return { body: json, discard: async () => {} };
  };
  /**
   * Submits, removing the call's stored uploads when it is refused, or answered with another task (an earlier event's,
   * duplication_prevention): they belong to no task then.
   */
  const submitting = async <T extends { id: string } | { task: { id: string } }>(invoked: MultipartInvoke, run: () => Promise<T>): Promise<T> => {
    let out: T;
    try {
      out = await run();
    } catch (e) {
      await invoked.discard().catch(() => {});
      throw e;
    }
    const storedFor = invoked.body.id ?? invoked.newTaskId;
    if (storedFor !== undefined && ('task' in out ? out.task.id : out.id) !== storedFor) await invoked.discard().catch(() => {});
    return out;
  };

  router.route({ method: 'POST', url: '/v1/agents/:agent_id/invoke', summary: 'Invoke an agent and wait for the result (asynchronous=true: the pending task)', ...spec, query: SyncInvokeQuery }, async ({ principal, body: json, query, params, request, reply }) => {
    const invoked = await bodyOf(request, principal, json);
    // xpander's clients ask the plain invoke route for an asynchronous run with ?asynchronous=true (issue 25).
    if (query.asynchronous) return submitting(invoked, () => c.tasks.submissions.submit(submission(principal, params.agent_id, invoked, query.version, request)));
    const task = await submitting(invoked, () => c.tasks.submissions.submit({ ...submission(principal, params.agent_id, invoked, query.version, request), awaited: true }));
    // A caller that hung up stops the wait (not the task, which is committed and runs on).
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    return c.tasks.submissions.waitForFinal(principal.organizationId, task.id, { timeoutMs: c.config.syncTimeoutMs, signal: gone.signal, submitted: task });
  });

  router.route({ method: 'POST', url: '/v1/agents/:agent_id/invoke/async', summary: 'Invoke an agent; returns the pending task', ...spec }, async ({ principal, body: json, query, params, request }) => {
    const invoked = await bodyOf(request, principal, json);
    return submitting(invoked, () => c.tasks.submissions.submit(submission(principal, params.agent_id, invoked, query.version, request)));
  });

  router.route(
    { method: 'POST', url: '/v1/agents/:agent_id/invoke/stream', summary: 'Invoke an agent; streams the run as Server-Sent Events', ...spec },
    async ({ principal, body: json, query, params, request, reply }) => {
      const invoked = await bodyOf(request, principal, json);
      const { task, cursor } = await submitting(invoked, () => c.tasks.submissions.enqueue({ ...submission(principal, params.agent_id, invoked, query.version, request), awaited: true }));
      return sendEventStream(request, reply, (signal) => c.tasks.queries.follow(principal.organizationId, task.id, cursor, signal));
    },
  );
}

function submission(principal: Principal, agentId: string, { body, newTaskId }: MultipartInvoke, version: number | 'draft' | undefined, request: FastifyRequest): TaskSubmission {
  return {
    // With an API key in x-api-key, Authorization may carry the end user's token (OIDC pre-auth).
    userToken: userTokenOf(request.headers, principal.kind === 'api_key'),
    callDepth: callDepthOf(request.headers),
    organizationId: principal.organizationId,
    agentId,
    caller: principal,
    taskId: body.id ?? undefined,
    newTaskId,
    version,
    source: 'api',
    text: body.input.text,
    files: body.input.files,
    user: body.input.user ?? null,
    additionalContext: body.additional_context,
    expectedOutput: body.expected_output,
    instructionsOverride: body.instructions_override,
    outputFormat: body.output_format,
    outputSchema: body.output_schema,
    userTokens: body.user_tokens ?? undefined,
    disableAttachmentInjection: body.disable_attachment_injection ?? false,
    dedupSource: { body: body as Record<string, unknown> },
  };
}
