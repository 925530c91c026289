// The service's root. A person whose browser opens BASE_URL is sent to the dashboard (which sends them on to its
// sign-in, where the API reference and the verify page are linked); an API client asking for anything else gets the
// catalogue's 404, as for any unknown route.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { wantsHtml } from './address-limit.js';
import { notFound } from './error-handler.js';

export function frontDoor(req: FastifyRequest, reply: FastifyReply) {
  if (wantsHtml(req)) return reply.header('cache-control', 'no-store').redirect('/dashboard', 303);
  return notFound(req, reply);
}
