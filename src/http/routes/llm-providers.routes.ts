import { z } from 'zod';
import type { Container } from '../../container.js';
import { AppError } from '../../errors.js';
import { CatalogModel, LLM_MODEL_PROVIDERS, listModels, listProviders } from '../../llm/model-catalog.js';
import type { Router } from '../router.js';

const tags = ['llm'];
const Provider = z.object({ internal_identifier: z.enum(LLM_MODEL_PROVIDERS), name: z.string(), requires_api_key: z.boolean() });

export function llmProvidersRoutes(router: Router, _c: Container): void {
  router.route({ method: 'GET', url: '/v1/misc/llm_providers', summary: 'LLM providers', tags, response: z.array(Provider) }, () => listProviders());
  router.route(
    {
      method: 'GET',
      url: '/v1/misc/llm_providers/:provider/models',
      summary: "A provider's models (replaced_by marks deprecated ones)",
      tags,
      params: z.object({ provider: z.string().min(1).max(64) }),
      response: z.array(CatalogModel),
    },
    ({ params }) => {
      const models = listModels(params.provider);
      if (!models) throw AppError.notFound('Provider');
      return models;
    },
  );
}
