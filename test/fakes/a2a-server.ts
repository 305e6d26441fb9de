import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type AgentCard, type Message, type Part } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';

/**
 * An A2A agent built with the protocol SDK's own server pieces (DefaultRequestHandler, InMemoryTaskStore, the JSON-RPC
 * transport handlers) on bare node:http, on 127.0.0.1. It speaks v0.3 by default, as most deployed agents do: a v0.3
 * agent card and the `message/send`, `message/stream`, `tasks/get`, `tasks/cancel` methods (the SDK's compat
 * handler); v1.0 requests (A2A-Version: 1.0) go to the v1.0 handler.
 *
 * The agent's behaviour follows the text it is sent: "slow ..." stays `working` until cancelled, "fail ..." ends
 * `failed`, anything else completes with the artifact "echo: <text>". Every JSON-RPC method called, every card fetch
 * and every cancel is recorded, with the request headers.
 */

export interface FakeA2aOptions {
  streaming?: boolean;
  /** Requests without this header value answer 401. */
  auth?: { header: string; value: string };
}

export interface FakeA2aServer {
  url: string;
  /** JSON-RPC methods received, in order. */
  methods: string[];
  headers: IncomingMessage['headers'][];
  cancels: string[];
  /** Texts the agent received. */
  received: string[];
  /** Each received message's text parts, and its metadata. */
  messages: { parts: string[]; metadata: unknown }[];
  close(): Promise<void>;
}

function textOf(parts: readonly Part[]): string {
  return parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

class ScriptedExecutor implements AgentExecutor {
  private readonly waiting = new Map<string, () => void>();
  constructor(private readonly server: { received: string[]; cancels: string[]; messages: { parts: string[]; metadata: unknown }[] }) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const text = textOf(ctx.userMessage.parts);
    this.server.received.push(text);
    this.server.messages.push({ parts: ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')), metadata: ctx.userMessage.metadata });
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    const status = (state: TaskState, message?: string) => ({
      state,
      message: message ? agentMessage(message, ids) : undefined,
      timestamp: new Date().toISOString(),
    });
    bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [ctx.userMessage], metadata: undefined }));
    bus.publish(AgentEvent.statusUpdate({ ...ids, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
    if (text.startsWith('slow')) {
      await new Promise<void>((resolve) => this.waiting.set(ctx.taskId, resolve));
      bus.publish(AgentEvent.statusUpdate({ ...ids, status: status(TaskState.TASK_STATE_CANCELED, 'cancelled on request'), metadata: undefined }));
    } else if (text.startsWith('fail')) {
      await new Promise((r) => setTimeout(r, 50));
      bus.publish(AgentEvent.statusUpdate({ ...ids, status: status(TaskState.TASK_STATE_FAILED, 'the flux capacitor broke'), metadata: undefined }));
    } else {
      // Later than the non-blocking answer, so a client that does not stream has to poll.
      await new Promise((r) => setTimeout(r, 150));
      const artifact = { artifactId: 'answer', name: 'answer', description: '', parts: [{ content: { $case: 'text' as const, value: `echo: ${text}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ ...ids, artifact, append: false, lastChunk: true, metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ ...ids, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
    }
    bus.finished();
  }

  async cancelTask(taskId: string): Promise<void> {
    this.server.cancels.push(taskId);
    this.waiting.get(taskId)?.();
  }
}

function agentMessage(text: string, ids: { taskId: string; contextId: string }): Message {
  return { messageId: `m-${Math.random().toString(36).slice(2)}`, ...ids, role: 2, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

export async function startFakeA2aServer(opts: FakeA2aOptions = {}): Promise<FakeA2aServer> {
  const state = { methods: [] as string[], headers: [] as IncomingMessage['headers'][], cancels: [] as string[], received: [] as string[], messages: [] as { parts: string[]; metadata: unknown }[] };
  let base = '';
  const card = (): AgentCard => ({
    name: 'Echo agent',
    description: 'Echoes what it is told',
    supportedInterfaces: [
      { url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
      { url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: opts.streaming === true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'echoes', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  });
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), new ScriptedExecutor(state));
  const v1 = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);

  const server: Server = createServer(async (req, res) => {
    state.headers.push(req.headers);
    if (opts.auth && req.headers[opts.auth.header] !== opts.auth.value) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      // The v0.3 card, as a v0.3 agent serves it.
      const v03 = {
        name: 'Echo agent',
        description: 'Echoes what it is told',
        url: base,
        version: '1.0.0',
        protocolVersion: '0.3.0',
        preferredTransport: 'JSONRPC',
        capabilities: { streaming: opts.streaming === true, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 'echo', name: 'echo', description: 'echoes', tags: [] }],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v03));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    state.methods.push(body.method);
    const version = String(req.headers['a2a-version'] ?? '0.3');
    const ctx = new ServerCallContext({ requestedVersion: version });
    const out = await (version.startsWith('0.') ? legacy : v1).handle(body, ctx);
    if (out && typeof (out as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for await (const ev of out as AsyncGenerator<unknown>) res.write(`data: ${JSON.stringify(ev)}\n\n`);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    ...state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
