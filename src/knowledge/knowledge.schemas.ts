import { z } from 'zod';
import { qs } from '../http/router.js';

/** Request schemas of docs/contract.md#knowledge. Unknown fields are refused (422 extra_forbidden). */

export const KbCreateBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(5000).nullable().optional(),
  })
  .strict();

export const KbUpdateBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(5000).nullable().optional(),
    // Agents use a knowledge base through their own knowledge_bases (with a strategy, and in a version or draft of the
    // agent): a link made here would be stored and never read. null (no link) stays accepted.
    agent_id: z
      .string()
      .max(128)
      .nullable()
      .optional()
      .refine((v) => v === null || v === undefined, {
        message: 'agent_id does not attach a knowledge base to an agent: PATCH /v1/agents/{agent_id} with knowledge_bases: [{"id": "<this knowledge base>", "strategy": "agentic_rag"}]',
      }),
  })
  .strict();

/** One issue per bad URL, whatever is wrong with it. */
const DocumentUrl = z
  .string()
  .max(4096)
  .refine((u) => URL.canParse(u) && /^https?:$/i.test(new URL(u).protocol) && new URL(u).hostname !== '', {
    message: 'Input should be a valid http or https URL',
  });

export const AddDocumentsBody = z
  .object({
    document_urls: z.array(DocumentUrl).min(1).max(100),
  })
  .strict();

export const KbParams = z.object({ kb_id: z.string() });
export const DocumentParams = z.object({ kb_id: z.string(), document_id: z.string() });

export const SearchQuery = z.object({
  search_query: z.string().trim().min(1).max(2000),
  top_k: qs.int(1, 50, 10),
});
