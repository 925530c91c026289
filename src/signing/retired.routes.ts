import type { FastifyInstance } from 'fastify';
import { apiError } from '../lib/errors.js';
import { Type } from 'typebox';
import { errorExample } from '../http/schemas.js';

/** `POST /v1/documents` was retired on 2026-07-31: every call answers 410 before its body is even read. */
export async function retiredRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/documents',
    {
      schema: {
        tags: ['Documents'],
        summary: 'Retired 2026-07-31: always 410 placement_retired.',
        response: {
          410: {
            description: 'Always: the endpoint was retired.',
            content: {
              'application/json': { schema: Type.Ref('Error'), example: errorExample('placement_retired_endpoint') },
            },
          },
        },
      },
      onRequest: async () => {
        throw apiError('placement_retired_endpoint');
      },
    },
    async () => {
      throw apiError('placement_retired_endpoint');
    },
  );
}
