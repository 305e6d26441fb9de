import type { Container } from '../../container.js';
import {
  CustomFunctionCreateBody,
  CustomFunctionExecuteBody,
  CustomFunctionParams,
  CustomFunctionPatchBody,
  presentCustomFunction,
} from '../../custom-functions/custom-functions.schemas.js';
import { pageOf, PageQuery, type Router } from '../router.js';

export function customFunctionsRoutes(router: Router, c: Container): void {
  const tags = ['custom functions'];
  const svc = c.customFunctions;

  router.route(
    { method: 'POST', url: '/v1/custom_functions', summary: 'Create a custom function (analysed before the answer)', tags, body: CustomFunctionCreateBody, status: 201 },
    async ({ principal, body }) => presentCustomFunction(await svc.create(principal.organizationId, body)),
  );

  router.route({ method: 'GET', url: '/v1/custom_functions', summary: 'List custom functions', tags, query: PageQuery }, async ({ principal, query }) => {
    const { items, total } = await svc.list(principal.organizationId, query.page, query.per_page);
    return pageOf(items.map(presentCustomFunction), total, query.page, query.per_page);
  });

  router.route(
    { method: 'GET', url: '/v1/custom_functions/:id', summary: 'Get a custom function', tags, params: CustomFunctionParams },
    async ({ principal, params }) => presentCustomFunction(await svc.get(principal.organizationId, params.id)),
  );

  router.route(
    { method: 'PATCH', url: '/v1/custom_functions/:id', summary: 'Update a custom function (new code is analysed again)', tags, params: CustomFunctionParams, body: CustomFunctionPatchBody },
    async ({ principal, params, body }) => presentCustomFunction(await svc.update(principal.organizationId, params.id, body)),
  );

  router.route(
    { method: 'DELETE', url: '/v1/custom_functions/:id', summary: 'Delete a custom function', tags, params: CustomFunctionParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.delete(principal.organizationId, params.id);
      return reply.code(204).send();
    },
  );

  router.route(
    { method: 'POST', url: '/v1/custom_functions/:id/execute', summary: 'Run a custom function with arguments', tags, params: CustomFunctionParams, body: CustomFunctionExecuteBody },
    async ({ principal, params, body }) => svc.execute(principal.organizationId, params.id, body?.args ?? {}),
  );
}
