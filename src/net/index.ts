/** Outbound HTTP for everything done on behalf of a user: see safe-fetch.ts. */
export { assertAllowed, resolveAllowedHost, createEgressPolicy, createSafeFetch, EgressRefusedError, isEgressRefused, NODE_BODY, nodeBodyOf } from './safe-fetch.js';
export type { EgressPolicy, SafeFetch, SafeFetchOptions } from './safe-fetch.js';
export { EgressAllowList, isNonPublicAddress } from './ip-ranges.js';
export { AnswerTooLarge, boundedFetch, boundedResponse, readBytesBounded, readTextBounded } from './bounded-response.js';
