// People (list, invite by e-mail), Settings (the reminder default, the retention) and Audit log pages (wiring; the rules are in
// people.service.ts, settings.service.ts and dashboard.service.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditLog, people, type DashboardDeps } from './dashboard.service.js';
import { inviteMember, type PeopleDeps } from './people.service.js';
import { field, page, query, say } from './render.js';
import { saveReminders, saveRetention, settings } from './settings.service.js';
import { mayUse } from './roles.js';

export async function workspaceRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  const peoplePage = async (req: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) =>
    page(reply, req, 'people.eta', {
      people: await people(deps, req.viewer!),
      canInvite: mayUse(req.viewer!.role, 'POST /dashboard/people'),
      notice: query(req).invited ? say(req, { key: 'people.invited', vars: { email: query(req).invited! } }) : null,
      ...extra,
    });

  app.get('/people', async (req, reply) => peoplePage(req, reply));

  app.post('/people', async (req, reply) => {
    const r = await inviteMember(deps, req.viewer!, { email: field(req, 'email'), role: field(req, 'role') });
    if (r.ok) return reply.redirect(`/dashboard/people?invited=${encodeURIComponent(r.email)}`, 303);
    reply.code(400);
    return peoplePage(req, reply, { error: say(req, r.problem), email: field(req, 'email') });
  });
  const settingsPage = async (req: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) =>
    page(reply, req, 'settings.eta', {
      ...(await settings(deps, req.viewer!)),
      notice: query(req).saved ? say(req, { key: 'settings.saved' }) : null,
      retentionNotice: query(req).retention ? say(req, { key: 'settings.retentionSaved' }) : null,
      ...extra,
    });
  app.get('/settings', async (req, reply) => settingsPage(req, reply));
  app.post('/settings/reminders', async (req, reply) => {
    const form = {
      enabled: field(req, 'enabled') === 'on',
      afterDays: field(req, 'after_days'),
      everyDays: field(req, 'every_days'),
    };
    const r = await saveReminders(deps, req.viewer!, form);
    if (r.ok) return reply.redirect('/dashboard/settings?saved=1', 303);
    reply.code(400);
    return settingsPage(req, reply, { error: say(req, r.problem), errorField: r.field, form });
  });
  app.post('/settings/retention', async (req, reply) => {
    const form = { days: field(req, 'retention_days') };
    const r = await saveRetention(deps, req.viewer!, form);
    if (r.ok) return reply.redirect('/dashboard/settings?retention=1', 303);
    reply.code(400);
    return settingsPage(req, reply, { retentionError: say(req, r.problem), retentionForm: form });
  });
  app.get('/audit-log', async (req, reply) =>
    page(reply, req, 'audit-log.eta', await auditLog(deps, req.viewer!, query(req).before)),
  );
}
