import { z } from 'zod';
import type { Container } from '../../container.js';
import { CreateWorkflowBody, PatchWorkflowBody, WorkflowIdParams, WorkflowVersionParams } from '../../workflows/workflow.schemas.js';
import { PageQuery, qs, type Router } from '../router.js';

const tags = ['workflows'];
const DeployQuery = z.object({ deploy: qs.bool().default(false) });

/** Workflows (docs/workflows.md): CRUD, versions, and the orchestration agent that runs them. */
export function workflowsRoutes(router: Router, c: Container): void {
  const svc = c.workflows;
  const one = '/v1/workflows/:workflow_id';

  router.route({ method: 'POST', url: '/v1/workflows', summary: 'Create a workflow (version 1) and its orchestration agent', tags, body: CreateWorkflowBody, status: 201 }, ({ principal, body }) =>
    svc.create(principal, body),
  );
  router.route({ method: 'GET', url: '/v1/workflows', summary: "The organization's workflows", tags, query: PageQuery }, ({ principal, query }) =>
    svc.list(principal.organizationId, query.page, query.per_page),
  );
  router.route({ method: 'GET', url: one, summary: 'Get a workflow (the draft when one is pending)', tags, params: WorkflowIdParams }, ({ principal, params }) =>
    svc.get(principal.organizationId, params.workflow_id),
  );
  router.route(
    { method: 'PATCH', url: one, summary: 'Change a workflow (staged as a draft unless deploy=true)', tags, params: WorkflowIdParams, query: DeployQuery, body: PatchWorkflowBody },
    ({ principal, params, query, body }) => svc.update(principal, params.workflow_id, body, { deploy: query.deploy }),
  );
  router.route({ method: 'PUT', url: one, summary: 'Deploy a workflow: publish the draft as version + 1; its agent runs it next', tags, params: WorkflowIdParams }, ({ principal, params }) =>
    svc.deploy(principal, params.workflow_id),
  );
  router.route({ method: 'DELETE', url: one, summary: 'Delete a workflow and its orchestration agent (their tasks stay readable)', tags, params: WorkflowIdParams }, ({ principal, params }) =>
    svc.delete(principal.organizationId, params.workflow_id),
  );
  router.route({ method: 'GET', url: `${one}/versions`, summary: 'Published versions, newest first', tags, params: WorkflowIdParams, query: PageQuery }, ({ principal, params, query }) =>
    svc.listVersions(principal.organizationId, params.workflow_id, query.page, query.per_page),
  );
  router.route({ method: 'GET', url: `${one}/versions/:version`, summary: 'One published version', tags, params: WorkflowVersionParams }, ({ principal, params }) =>
    svc.getVersion(principal.organizationId, params.workflow_id, params.version),
  );
  router.route({ method: 'POST', url: `${one}/agent`, summary: "Create (again) or re-point the workflow's orchestration agent at its current version", tags, params: WorkflowIdParams }, ({ principal, params }) =>
    svc.ensureAgent(principal, params.workflow_id),
  );
}
