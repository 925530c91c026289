// People (list, invite by e-mail), Settings (the workspace's face: name, reply-to, accent colour, logo; the reminder
// default, the retention, the default language) and Audit log pages (wiring; the rules are in people.service.ts, settings.service.ts and
// dashboard.service.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { LOGO_FORM_BODY_LIMIT, LOGO_MAX_BYTES } from '../limits.js';
import { auditLog, people, type DashboardDeps } from './dashboard.service.js';
import { inviteMember, type PeopleDeps } from './people.service.js';
import { field, notice, page, query, say, type Notices } from './render.js';
import {
  removeLogo,
  saveFace,
  saveLocale,
  saveLogo,
  saveReminders,
  saveRetention,
  settings,
} from './settings.service.js';
import { mayUse } from './roles.js';

const FACE_NOTICES: Notices = {
  saved: 'settings.workspaceSaved',
  logo: 'settings.logoSaved',
  logoRemoved: 'settings.logoRemoved',
};
/** Logo uploads past LOGO_MAX_BYTES: the rest was skipped. */
const tooLarge = new WeakSet<FastifyRequest>();

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
      languageNotice: query(req).language ? say(req, { key: 'settings.languageSaved' }) : null,
      faceNotice: notice(req, FACE_NOTICES, query(req).face),
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
  app.post('/settings/language', async (req, reply) => {
    const form = { locale: field(req, 'locale') };
    const r = await saveLocale(deps, req.viewer!, form);
    if (r.ok) return reply.redirect('/dashboard/settings?language=1', 303);
    reply.code(400);
    return settingsPage(req, reply, { languageError: say(req, r.problem), languageForm: form });
  });
  app.post('/settings/workspace', async (req, reply) => {
    const form = { name: field(req, 'name'), replyTo: field(req, 'reply_to'), brandColor: field(req, 'brand_color') };
    const r = await saveFace(deps, req.viewer!, form);
    if (r.ok) return reply.redirect('/dashboard/settings?face=saved', 303);
    reply.code(400);
    return settingsPage(req, reply, { faceError: say(req, r.problem), faceErrorField: r.field, faceForm: form });
  });
  // The logo arrives as a multipart form (a file input works without JavaScript); read in a scope of its own so
  // no other dashboard route takes files. A file over the limit is read no further and refused by its size.
  await app.register(async (logo) => {
    await logo.register(multipart, {
      attachFieldsToBody: 'keyValues',
      throwFileSizeLimit: false,
      limits: { fileSize: LOGO_MAX_BYTES, files: 1, fields: 4, fieldSize: 1024 },
      async onFile(part) {
        await part.toBuffer();
        if (part.file.truncated) tooLarge.add(this);
      },
    });
    logo.post('/settings/logo', { ...UPLOAD_ROUTE, bodyLimit: LOGO_FORM_BODY_LIMIT }, async (req, reply) => {
      const file = (req.body as Record<string, unknown> | undefined)?.logo;
      const upload = tooLarge.has(req)
        ? ({ tooLarge: true } as const)
        : Buffer.isBuffer(file) && file.length > 0
          ? { bytes: new Uint8Array(file) }
          : ({ missing: true } as const);
      const r = await saveLogo(deps, req.viewer!, upload);
      if (r.ok) return reply.redirect('/dashboard/settings?face=logo', 303);
      reply.code(400);
      return settingsPage(req, reply, { logoError: say(req, r.problem) });
    });
  });
  app.post('/settings/logo/remove', async (req, reply) => {
    const r = await removeLogo(deps, req.viewer!);
    if (r.ok) return reply.redirect('/dashboard/settings?face=logoRemoved', 303);
    reply.code(400);
    return settingsPage(req, reply, { logoError: say(req, r.problem) });
  });
  app.get('/audit-log', async (req, reply) =>
    page(reply, req, 'audit-log.eta', await auditLog(deps, req.viewer!, query(req).before)),
  );
}
