import type { Container } from '../../container.js';
import { presentSkill, SkillCreateBody, SkillParams } from '../../skills/skills.schemas.js';
import { pageOf, PageQuery, type Router } from '../router.js';

export function skillsRoutes(router: Router, c: Container): void {
  const tags = ['skills'];
  const svc = c.skills;

  router.route({ method: 'GET', url: '/v1/skills', summary: 'Skills catalog: built-in skills, then the organization\'s', tags, query: PageQuery }, async ({ principal, query }) => {
    const { items, total } = await svc.list(principal.organizationId, query.page, query.per_page);
    return pageOf(items.map(presentSkill), total, query.page, query.per_page);
  });

  router.route(
    { method: 'POST', url: '/v1/skills', summary: 'Create an organization skill', tags, body: SkillCreateBody, status: 201 },
    async ({ principal, body }) => presentSkill(await svc.create(principal.organizationId, body)),
  );

  router.route(
    { method: 'GET', url: '/v1/skills/:name', summary: 'Get a skill', tags, params: SkillParams },
    async ({ principal, params }) => presentSkill(await svc.get(principal.organizationId, params.name)),
  );

  router.route(
    { method: 'DELETE', url: '/v1/skills/:name', summary: 'Delete an organization skill', tags, params: SkillParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.delete(principal.organizationId, params.name);
      return reply.code(204).send();
    },
  );
}
