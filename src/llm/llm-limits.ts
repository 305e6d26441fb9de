/**
 * Most bytes of one answer of an LLM endpoint (a whole JSON answer, or one event of a streamed one). An agent's
 * `llm_api_base` is the tenant's choice and the SDKs read answers without a limit: an endless answer grew a run's
 * process by 0.9 GB on one call (src/net/bounded-response.ts). Far above any real answer or event.
 */
export const MAX_LLM_MESSAGE_BYTES = 32 * 1024 * 1024;
