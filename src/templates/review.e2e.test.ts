// Staged template instances end to end on both databases: review, confirm, discard, expiry, races, render_failed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { assertPadesLta } from '../documents/pdf/testing/pades.js';
import { localCaPem } from '../signing/testing/complete.js';
import { bothDatabases } from '../testing/services.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { email, has, templateSteps } from './testing/e2e.js';
import { VALUES } from './testing/fixtures.js';

const DAY = 24 * 3600_000;
const databases = await bothDatabases();

for (const d of databases) {
  describe(`templates end to end (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
    });
    after(() => e.close());
    const { newTemplate, staged, signedPdf, signAs } = templateSteps(() => e);

    test('review: staged sends nothing; confirm by API invites in turn; signing seals a PDF pdfsig verifies', async (t) => {
      const tpl = await newTemplate();
      const { ti, people } = await staged(tpl.id, { title: 'Reviewed agreement' });
      assert.equal(ti.status, 'staged');
      assert.match(ti.review_url, new RegExp(`^${e.h.config.baseUrl}/review/[A-Za-z0-9_-]{43}$`));
      assert.equal(Date.parse(ti.review_expires_at) - e.h.clock.now(), 14 * DAY);
      await e.work();
      const st = e.eventsOf('template_instance.staged', ti.document_id);
      assert.equal(st.length, 1);
      for (const k of ['document_id', 'template_id', 'template_version', 'kind', 'review_url', 'review_expires_at'])
        assert.ok(k in st[0]!, k);
      assert.equal(st[0]!.review_url, ti.review_url);
      assert.equal(st[0]!.recipients.length, 2);
      assert.equal((await e.linksFor(people.client)).length, 0, 'staging sends no mail');
      assert.equal((await e.api('GET', `/v1/documents/${ti.document_id}`)).json.status, 'draft');
      const got = await e.api('GET', `/v1/template-instances/${ti.id}`);
      assert.equal(got.status, 200);
      assert.equal(got.json.status, 'staged');
      assert.equal(got.json.review_url, undefined, 'the review link is shown once');

      const c = await e.api('POST', `/v1/template-instances/${ti.id}/confirm`, {});
      assert.equal(c.status, 200, c.text);
      assert.equal(c.json.status, 'confirmed');
      assert.equal(c.json.confirmed_by, 'api');
      await e.work();
      const conf = e.eventsOf('template_instance.confirmed', ti.document_id);
      assert.equal(conf.length, 1);
      assert.equal(conf[0]!.actor, 'api');
      assert.equal(conf[0]!.recipients.length, 2);
      assert.equal(e.eventsOf('signing_request.sent', ti.document_id).length, 1);
      assert.equal((await e.linksFor(people.provider)).length, 0);
      await signAs(await e.linkFor(people.client));
      await e.work();
      assert.equal(e.eventsOf('signing_request.sent', ti.document_id).length, 1, 'a later turn emits no sent event');
      await signAs(await e.linkFor(people.provider));
      await e.work();
      const done = e.eventsOf('document.completed', ti.document_id);
      assert.equal(done.length, 1);
      const bytes = await signedPdf(ti.document_id);
      const tools = ['pdfsig', 'pdftotext'];
      if (process.env.CI === 'true' || tools.every(has)) {
        const tmp = await pdfScratch('signet-tpl-');
        try {
          assertPadesLta(tmp, bytes, await localCaPem(e), done[0]!.tsa_signed_at);
          const text = tmp.pdfText(bytes);
          assert.match(text, /Ada Lovelace Ltd/, "the sender's values are on the sealed PDF");
          assert.match(text, /pro/);
          assert.match(text, /2026-12-01/);
        } finally {
          await tmp.cleanup();
        }
      } else t.diagnostic('pdfsig/pdftotext not installed: sealed-PDF checks skipped');
    });

    test('discard by API; confirm or discard again answers 409 by state; expiry after 14 days answers 410', async () => {
      const tpl = await newTemplate();
      const a = (await staged(tpl.id)).ti;
      const d = await e.api('POST', `/v1/template-instances/${a.id}/discard`);
      assert.equal(d.status, 200, d.text);
      assert.equal(d.json.status, 'discarded');
      assert.equal(d.json.discard_reason, 'discarded');
      await e.work();
      const ev = e.eventsOf('template_instance.discarded', a.document_id);
      assert.equal(ev.length, 1);
      assert.equal(ev[0]!.reason, 'discarded');
      assert.equal((await e.api('POST', `/v1/template-instances/${a.id}/confirm`, {})).json.code, 'discarded');
      assert.equal((await e.api('POST', `/v1/template-instances/${a.id}/discard`)).status, 409);
      assert.equal((await e.api('GET', `/v1/documents/${a.document_id}`)).json.status, 'discarded');

      const b = (await staged(tpl.id)).ti;
      assert.equal((await e.api('POST', `/v1/template-instances/${b.id}/confirm`, {})).status, 200);
      const again = await e.api('POST', `/v1/template-instances/${b.id}/confirm`, {});
      assert.equal(again.status, 409);
      assert.equal(again.json.code, 'already_confirmed');
      assert.equal((await e.api('POST', `/v1/template-instances/${b.id}/discard`)).json.code, 'already_confirmed');

      const direct = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: [
          { slot: 'client', name: 'C', email: email('c') },
          { slot: 'provider', name: 'P', email: email('p') },
        ],
        field_values: VALUES,
      });
      const ns = await e.api('POST', `/v1/template-instances/${direct.json.template_instance.id}/confirm`, {});
      assert.equal(ns.status, 409);
      assert.equal(ns.json.code, 'not_staged');

      const x = (await staged(tpl.id)).ti;
      const y = (await staged(tpl.id)).ti;
      e.h.clock.advance(14 * DAY);
      const late = await e.api('POST', `/v1/template-instances/${x.id}/confirm`, {});
      assert.equal(late.status, 410, 'the window closed before the job ran');
      assert.equal(late.json.code, 'review_expired');
      assert.equal((await e.api('POST', `/v1/template-instances/${y.id}/discard`)).status, 410);
      const run = await e.h.runtime.runJob('expire-reviews');
      assert.ok((run.expired as number) >= 2, JSON.stringify(run));
      await e.work();
      for (const i of [x, y]) {
        const evs = e.eventsOf('template_instance.discarded', i.document_id);
        assert.equal(evs.length, 1);
        assert.equal(evs[0]!.reason, 'expired');
        assert.equal((await e.api('POST', `/v1/template-instances/${i.id}/confirm`, {})).status, 410);
      }
      assert.equal((await e.h.runtime.runJob('expire-reviews')).expired, 0, 'expired once');
    });

    test('concurrent confirm and discard of one staged instance: exactly one wins, one event', async () => {
      const tpl = await newTemplate();
      for (let round = 0; round < 3; round++) {
        const { ti } = await staged(tpl.id);
        const [c, d] = await Promise.all([
          e.api('POST', `/v1/template-instances/${ti.id}/confirm`, {}),
          e.api('POST', `/v1/template-instances/${ti.id}/discard`),
        ]);
        assert.deepEqual([c.status, d.status].sort(), [200, 409], `${c.text} / ${d.text}`);
        await e.work();
        const n =
          e.eventsOf('template_instance.confirmed', ti.document_id).length +
          e.eventsOf('template_instance.discarded', ti.document_id).length;
        assert.equal(n, 1);
      }
    });

    test('a staged file that can no longer be rendered: confirm answers 502 render_failed and sends nothing', async () => {
      const tpl = await newTemplate();
      const { ti, people } = await staged(tpl.id);
      const garbage = await e.h.runtime.blobs.put(new TextEncoder().encode('not a pdf at all'), 'prepared');
      await e.h.db.kysely
        .updateTable('documents')
        .set({ prepared_blob: garbage })
        .where('id', '=', ti.document_id)
        .execute();
      const c = await e.api('POST', `/v1/template-instances/${ti.id}/confirm`, {});
      assert.equal(c.status, 502, c.text);
      assert.equal(c.json.code, 'render_failed');
      await e.work();
      assert.equal((await e.api('GET', `/v1/template-instances/${ti.id}`)).json.status, 'staged');
      assert.equal((await e.linksFor(people.client)).length, 0);
      assert.equal(e.eventsOf('template_instance.confirmed', ti.document_id).length, 0);
    });
  });
}
