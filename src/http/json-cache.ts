import type { FastifyReply } from 'fastify';

/**
 * Sends a cached, immutable object as JSON, serialising it once per object identity. For large responses served
 * from a service cache (an operation schema of a big OpenAPI document), serialisation is most of the request.
 * Only for objects nobody mutates after they are cached.
 */
const serialized = new WeakMap<object, string>();

export function sendCachedJson(reply: FastifyReply, value: object): FastifyReply {
  let text = serialized.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    serialized.set(value, text);
  }
  return reply.type('application/json; charset=utf-8').send(text);
}
