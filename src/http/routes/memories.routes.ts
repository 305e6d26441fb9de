import type { Container } from '../../container.js';
import {
  AgentMemoryCreateBody,
  AgentMemoryIdParams,
  AgentMemoryParams,
  AgentMemoryQuery,
  MemoryPatchBody,
  presentMemory,
  UserMemoryCreateBody,
  UserMemoryIdParams,
  UserMemoryParams,
  UserMemoryQuery,
} from '../../memory/memory.schemas.js';
import { pageOf, type Router } from '../router.js';

/** Memories (docs/memory.md): the same records seen from an agent and from a user. */
export function memoriesRoutes(router: Router, c: Container): void {
  const tags = ['memories'];
  const svc = c.memories;

  router.route(
    { method: 'GET', url: '/v1/agents/:agent_id/memories', summary: "An agent's memories (about its users and shared), newest first", tags, params: AgentMemoryParams, query: AgentMemoryQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await svc.listForAgent(principal.organizationId, params.agent_id, { userId: query.user_id, scope: query.scope }, query.page, query.per_page);
      return pageOf(items.map(presentMemory), total, query.page, query.per_page);
    },
  );
  router.route(
    { method: 'POST', url: '/v1/agents/:agent_id/memories', summary: 'Add a memory (about a user with user_id, else shared)', tags, params: AgentMemoryParams, body: AgentMemoryCreateBody, status: 201 },
    async ({ principal, params, body }) =>
      presentMemory(await svc.create(principal.organizationId, { agentId: params.agent_id, userId: body.user_id ?? null, content: body.content, source: 'api' })),
  );
  router.route(
    { method: 'GET', url: '/v1/agents/:agent_id/memories/:memory_id', summary: 'Get a memory', tags, params: AgentMemoryIdParams },
    async ({ principal, params }) => presentMemory(await svc.get(principal.organizationId, { agentId: params.agent_id }, params.memory_id)),
  );
  router.route(
    { method: 'PATCH', url: '/v1/agents/:agent_id/memories/:memory_id', summary: 'Edit a memory', tags, params: AgentMemoryIdParams, body: MemoryPatchBody },
    async ({ principal, params, body }) => presentMemory(await svc.update(principal.organizationId, { agentId: params.agent_id }, params.memory_id, body.content)),
  );
  router.route(
    { method: 'DELETE', url: '/v1/agents/:agent_id/memories/:memory_id', summary: 'Delete a memory (it is no longer recalled)', tags, params: AgentMemoryIdParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.delete(principal.organizationId, { agentId: params.agent_id }, params.memory_id);
      return reply.code(204).send();
    },
  );

  router.route(
    { method: 'GET', url: '/v1/users/:user_id/memories', summary: "A user's memories across the organization's agents, newest first", tags, params: UserMemoryParams, query: UserMemoryQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await svc.listForUser(principal.organizationId, params.user_id, { agentId: query.agent_id }, query.page, query.per_page);
      return pageOf(items.map(presentMemory), total, query.page, query.per_page);
    },
  );
  router.route(
    { method: 'POST', url: '/v1/users/:user_id/memories', summary: 'Add a memory about a user, kept by one agent', tags, params: UserMemoryParams, body: UserMemoryCreateBody, status: 201 },
    async ({ principal, params, body }) =>
      presentMemory(await svc.create(principal.organizationId, { agentId: body.agent_id, userId: params.user_id, content: body.content, source: 'api' })),
  );
  router.route(
    { method: 'GET', url: '/v1/users/:user_id/memories/:memory_id', summary: 'Get a memory about a user', tags, params: UserMemoryIdParams },
    async ({ principal, params }) => presentMemory(await svc.get(principal.organizationId, { userId: params.user_id }, params.memory_id)),
  );
  router.route(
    { method: 'PATCH', url: '/v1/users/:user_id/memories/:memory_id', summary: 'Edit a memory about a user', tags, params: UserMemoryIdParams, body: MemoryPatchBody },
    async ({ principal, params, body }) => presentMemory(await svc.update(principal.organizationId, { userId: params.user_id }, params.memory_id, body.content)),
  );
  router.route(
    { method: 'DELETE', url: '/v1/users/:user_id/memories/:memory_id', summary: 'Delete a memory about a user', tags, params: UserMemoryIdParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.delete(principal.organizationId, { userId: params.user_id }, params.memory_id);
      return reply.code(204).send();
    },
  );
}
