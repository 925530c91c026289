// People and Audit log pages (wiring; the data comes from dashboard.service.ts).
import type { FastifyInstance } from 'fastify';
import { auditLog, people, type DashboardDeps } from './dashboard.service.js';
import type { PeopleDeps } from './people.service.js';
import { page, query } from './render.js';

export async function workspaceRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  app.get('/people', async (req, reply) => page(reply, req, 'people.eta', { people: await people(deps, req.viewer!) }));
  app.get('/audit-log', async (req, reply) =>
    page(reply, req, 'audit-log.eta', await auditLog(deps, req.viewer!, query(req).before)),
  );
}
