import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authOf } from '../http/request-context.js';
import { errorResponses } from '../http/schemas.js';
import { presentWorkspace } from './presenters.js';

export async function meRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me',
    {
      config: { rateLimit: false },
      schema: {
        tags: ['Workspace'],
        summary: "The key's workspace. Exempt from the rate limit: uses no token, carries no RateLimit headers.",
        response: {
          200: Type.Object(
            {
              id: Type.String(),
              name: Type.String(),
              slug: Type.String(),
              tier: Type.String(),
              region: Type.Optional(
                Type.String({
                  description:
                    'Signet addition: the hosting region where the workspace’s documents live (the deployment’s ' +
                    '`SIGNET_REGION` when the workspace was created). Absent when none was recorded.',
                }),
              ),
            },
            {
              examples: [
                {
                  id: 'ws_4f1c2a9e8b7d6c5a3e2f1b0d',
                  name: 'Acme',
                  slug: 'acme',
                  tier: 'business',
                  region: 'eu-central',
                },
              ],
            },
          ),
          ...errorResponses(401, 402, 403),
        },
      },
    },
    async (req) => presentWorkspace(authOf(req).workspace),
  );
}
