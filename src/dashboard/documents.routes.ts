// Documents: the list, a document's page, its two downloads, withdraw, remind and purge (wiring; the rules are in
// documents.service.ts and the signing services it calls).
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from './dashboard.service.js';
import {
  certificatePdf,
  documentList,
  documentPage,
  purge,
  purgePage,
  remind,
  sealedPdf,
  withdraw,
  withdrawPage,
} from './documents.service.js';
import type { PeopleDeps } from './people.service.js';
import { notice, page, query, say, type Notices } from './render.js';

const NOTICES: Notices = {
  withdrawn: 'document.withdrawn',
  reminded: 'document.reminded',
  sent: 'document.sendDone',
  purged: 'document.purged',
};
const REFUSALS: Notices = {
  withdraw: 'document.notWithdrawn',
  remind: 'document.notReminded',
  purge: 'document.notPurged',
};

export async function documentsRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  type Id = { Params: { id: string } };
  const back = (id: string, outcome: string) => `/dashboard/documents/${encodeURIComponent(id)}?${outcome}`;

  app.get('/documents', async (req, reply) =>
    page(reply, req, 'documents.eta', {
      ...(await documentList(deps, req.viewer!, query(req))),
      notice: notice(req, NOTICES, query(req).done),
    }),
  );

  app.get<Id>('/documents/:id', async (req, reply) => {
    const q = query(req);
    return page(reply, req, 'document.eta', {
      ...(await documentPage(deps, req.viewer!, req.params.id)),
      notice: notice(req, NOTICES, q.done),
      refusal: notice(req, REFUSALS, q.refused),
    });
  });

  app.get<Id>('/documents/:id/signed.pdf', async (req, reply) => {
    const d = await sealedPdf(deps, req.viewer!, req.params.id);
    if (!d) {
      reply.code(404);
      return page(reply, req, 'error.eta', {
        heading: say(req, { key: 'document.noSealedPdf' }),
        message: say(req, { key: 'document.noSealedPdfDetail' }),
      });
    }
    return reply
      .type('application/pdf')
      .header('content-disposition', `attachment; filename="${d.id}-signed.pdf"`)
      .send(Buffer.from(d.pdf));
  });

  app.get<Id>('/documents/:id/audit-certificate.pdf', async (req, reply) => {
    const c = await certificatePdf(deps, req.viewer!, req.params.id);
    return reply
      .type('application/pdf')
      .header('content-disposition', `attachment; filename="${c.id}-audit-certificate.pdf"`)
      .send(Buffer.from(c.pdf));
  });

  app.get<Id>('/documents/:id/withdraw', async (req, reply) =>
    page(reply, req, 'document-withdraw.eta', { doc: await withdrawPage(deps, req.viewer!, req.params.id) }),
  );

  app.post<Id>('/documents/:id/withdraw', async (req, reply) => {
    const ok = await withdraw(deps, req.viewer!, req.params.id);
    return reply.redirect(back(req.params.id, ok ? 'done=withdrawn' : 'refused=withdraw'), 303);
  });

  // Purge: a confirmation page (a plain form, no script), then the list, since the document is gone.
  app.get<Id>('/documents/:id/purge', async (req, reply) =>
    page(reply, req, 'document-purge.eta', { doc: await purgePage(deps, req.viewer!, req.params.id) }),
  );

  app.post<Id>('/documents/:id/purge', async (req, reply) => {
    const ok = await purge(deps, req.viewer!, req.params.id);
    return reply.redirect(ok ? '/dashboard/documents?done=purged' : back(req.params.id, 'refused=purge'), 303);
  });

  app.post<{ Params: { id: string; request: string } }>(
    '/documents/:id/requests/:request/remind',
    async (req, reply) => {
      const ok = await remind(deps, req.viewer!, req.params.id, req.params.request);
      return reply.redirect(back(req.params.id, ok ? 'done=reminded' : 'refused=remind'), 303);
    },
  );
}
