/**
 * The webhook receiver's two routes (docs/contract.md#webhooks, spec 4.3-4.5) for the OpenAPI document. They are served
 * by the webhook listener (webhooks.app.ts and its fast lane), not by the router, so they are described here, each with
 * the webhook listener as its server (on the operation: tools read a path item's keys as methods). Parameters come from the query string, the body (JSON, form or multipart
 * fields) or `params_mapping`, in that order of precedence.
 */

const bool = { type: 'string', enum: ['true', 'false', '1', '0', 'yes', 'no'] };

const PARAMS: Record<string, { description: string; schema?: Record<string, unknown> }> = {
  prompt: { description: 'The message for the agent.' },
  asynchronous: { description: 'Answer `{"status":"Started"}` once the task is stored instead of waiting for the result.', schema: bool },
  task_id: { description: 'Continue this task (same conversation), or create it with this id.' },
  user_id: { description: 'End-user id the task runs for.' },
  user_email: { description: 'End-user email.' },
  user_first_name: { description: 'End-user first name.' },
  user_last_name: { description: 'End-user last name.' },
  getter: { description: 'Dot path into the synchronous result object to answer with (e.g. `result.total`); a missing path answers null.' },
  json: { description: 'Parse the result as JSON before `getter` reads it.', schema: bool },
  disable_attachment_injection: { description: 'Do not put the text extracted from uploaded files in the prompt (their URLs are always given).', schema: bool },
  user_tokens: { description: 'JSON object of per-tool user tokens, keyed by the graph item id.' },
  params_mapping: { description: 'JSON object mapping parameter names (prompt, task_id, user_*) to dot paths in the body.' },
};

function parameters(extra: unknown[]): unknown[] {
  return [...extra, ...Object.entries(PARAMS).map(([name, p]) => ({ name, in: 'query', required: false, description: p.description, schema: p.schema ? { ...p.schema, description: p.description } : { type: 'string' } }))];
}

function body(withAgentId: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(PARAMS)) properties[name] = { description: `${p.description} (The query string wins over the body.)` };
  if (withAgentId) properties.agent_id = { type: 'string', description: 'The agent to run (or in the query string).' };
  const json = { type: 'object', additionalProperties: { description: 'Any other field reaches the agent as context (the task\'s additional_context).' }, properties };
  const multipart = {
    type: 'object',
    properties: { ...properties, files: { type: 'array', items: { type: 'string', format: 'binary' }, description: 'Files: every file part counts, whatever its field name; stored and given to the agent as presigned URLs.' } },
  };
  return {
    required: false,
    content: { 'application/json': { schema: json }, 'application/x-www-form-urlencoded': { schema: json }, 'multipart/form-data': { schema: multipart } },
  };
}

const RESPONSES = {
  200: { description: 'Synchronous: the result object (or the `getter` value). Asynchronous: `{"status":"Started"}` once the task is stored.' },
  401: { description: 'No credentials (key form).' },
  403: { description: 'Invalid credentials.' },
  404: { description: 'No such webhook or agent.' },
  413: { description: 'A file or the request is too large.' },
  415: { description: 'A file of a type that cannot be read.' },
  422: { description: 'A bad parameter value, named.' },
  503: { description: 'The result is not ready in time; carries Retry-After.' },
};

export function webhookReceiverPaths(webhookUrl: string): Record<string, Record<string, unknown>> {
  const servers = [{ url: webhookUrl, description: 'The webhook listener (AGENTRY_WEBHOOK_PORT)' }];
  return {
    '/wh_{secret}': {
      post: {
        servers,
        summary: 'Run the agent of this webhook URL (the secret in the path is the credential)',
        tags: ['webhook receiver'],
        operationId: 'webhook_public',
        parameters: parameters([{ name: 'secret', in: 'path', required: true, description: 'The webhook secret (from GET /v1/agents/{id}/webhook).', schema: { type: 'string' } }]),
        requestBody: body(false),
        responses: RESPONSES,
      },
    },
    '/': {
      post: {
        servers,
        summary: 'Run an agent with an API key (`x-api-key` header or query parameter) and `agent_id`',
        tags: ['webhook receiver'],
        operationId: 'webhook_key',
        parameters: parameters([{ name: 'agent_id', in: 'query', required: false, description: 'The agent to run (or in the body).', schema: { type: 'string' } }]),
        requestBody: body(true),
        responses: RESPONSES,
        security: [{ ApiKeyAuth: [] }],
      },
    },
  };
}
