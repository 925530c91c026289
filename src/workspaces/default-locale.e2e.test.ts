// A workspace's default language (migration 023) end to end, on SQLite and PostgreSQL, against the real app on a
// real port: an owner sets it on the dashboard's Settings page (one audit row each time); the next API request naming
// no locale is sent in it (the /v1 gate's cached workspace does not outlive the change) — the invitation's locale
// and subject, the `signing_request.sent` event's `locale` — while an explicit locale wins and an unknown one is
// still 400; template instantiate, generate, a bulk-send row, a dashboard template use and the dashboard's send form
// follow it; members read it and are refused (403) if they post; `none` brings English back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { signedIn, type DashboardClient } from '../dashboard/testing/client.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { templateSteps } from '../templates/testing/e2e.js';
import { VALUES } from '../templates/testing/fixtures.js';

const databases = await bothDatabases();
const SUBJECT = { en: /asks you to sign/, de: /bittet Sie, .* zu unterschreiben/, fr: /vous invite à signer/ };

for (const d of databases) {
  describe(`the workspace's default language (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let owner: DashboardClient;
    let member: DashboardClient;
    before(async () => {
      e = await startE2E({ database: d.database });
      ({ client: owner } = await signedIn(e.h, e.workspaceId, 'owner'));
      ({ client: member } = await signedIn(e.h, e.workspaceId, 'member'));
    });
    after(() => e?.close());
    const { newTemplate } = templateSteps(() => e);
    let n = 0;
    const someone = () => `signer${++n}.${Math.random().toString(36).slice(2, 8)}@example.com`;

    /** POST /v1/signing-requests for one signer; the document id, or the refusal. */
    const create = async (extra: Record<string, unknown> = {}) => {
      const email = someone();
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: [{ role: 'a', email, name: 'Signer' }],
        file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Agreement']] })) },
        placement: 'auto_append',
        title: 'Agreement',
        ...extra,
      });
      return { r, email };
    };
    /** The document's locale, its invitation's locale and subject, and its `signing_request.sent` event's locale. */
    const sentAs = async (documentId: string) => {
      await e.work();
      const doc = await e.h.db.kysely
        .selectFrom('documents')
        .select('locale')
        .where('id', '=', documentId)
        .executeTakeFirstOrThrow();
      const mail = await e.h.db.kysely
        .selectFrom('mail_outbox')
        .select(['locale', 'subject'])
        .where('document_id', '=', documentId)
        .where('template', '=', 'invitation')
        .executeTakeFirstOrThrow();
      const events = e.eventsOf('signing_request.sent', documentId);
      assert.equal(events.length, 1);
      return { document: doc.locale, mail: mail.locale, subject: mail.subject, event: events[0]!.locale };
    };
    const expectSent = async (documentId: string, locale: 'en' | 'de' | 'fr') => {
      const s = await sentAs(documentId);
      assert.deepEqual([s.document, s.mail, s.event], [locale, locale, locale]);
      assert.match(s.subject, SUBJECT[locale]);
    };
    const setLanguage = async (client: DashboardClient, locale: string) => {
      await client.get('/dashboard/settings');
      return client.post('/dashboard/settings/language', { locale });
    };

    test('set on the Settings page: the next request naming no locale is German; an explicit one wins', async () => {
      // English first, which also puts the key's workspace in the /v1 gate's cache.
      const plain = await create();
      assert.equal(plain.r.status, 201, plain.r.text);
      await expectSent(plain.r.json.document_id, 'en');
      const page = await owner.get('/dashboard/settings');
      assert.match(page.text, /<h2 id="language-title">Language<\/h2>/);
      assert.match(page.text, /<p id="language-now">Now: <strong>English \(default\)<\/strong>\.<\/p>/);
      assert.match(page.text, /<option value="" selected>English \(default\)<\/option>/);
      assert.match(page.text, /<option value="de" lang="de">Deutsch<\/option>/);

      const saved = await setLanguage(owner, 'de');
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.location, '/dashboard/settings?language=1');
      const after = await owner.get('/dashboard/settings?language=1');
      assert.match(after.text, /role="status" id="language-notice">Language saved\./);
      assert.match(after.text, /<p id="language-now">Now: <strong lang="de">Deutsch<\/strong>\.<\/p>/);
      assert.match(after.text, /<option value="de" lang="de" selected>Deutsch<\/option>/);

      const german = await create();
      assert.equal(german.r.status, 201, german.r.text);
      await expectSent(german.r.json.document_id, 'de');

      const french = await create({ locale: 'fr' });
      assert.equal(french.r.status, 201, french.r.text);
      await expectSent(french.r.json.document_id, 'fr');
      const english = await create({ locale: 'en' });
      await expectSent(english.r.json.document_id, 'en');

      for (const locale of ['xx', 'de-DE', 'DE', '']) {
        const bad = await create({ locale });
        assert.equal(bad.r.status, 400, `${locale}: ${bad.r.text}`);
        assert.equal(bad.r.json.code, 'invalid_request');
      }
    });

    test('template instantiate and generate, a bulk-send row and a dashboard template use take it too', async () => {
      assert.equal((await setLanguage(owner, 'de')).status, 303);
      const tpl = await newTemplate();
      const recipients = () => [
        { slot: 'client', name: 'Client Person', email: someone() },
        { slot: 'provider', name: 'Provider Person', email: someone() },
      ];
      const instantiate = (extra: Record<string, unknown> = {}) =>
        e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
          recipients: recipients(),
          field_values: VALUES,
          ...extra,
        });
      const de = await instantiate();
      assert.equal(de.status, 201, de.text);
      await expectSent(de.json.template_instance.document_id, 'de');
      const fr = await instantiate({ locale: 'fr' });
      assert.equal(fr.status, 201, fr.text);
      await expectSent(fr.json.template_instance.document_id, 'fr');
      const bad = await instantiate({ locale: 'klingon' });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.json.code, 'invalid_request');

      const localeOf = async (documentId: string) =>
        (
          await e.h.db.kysely
            .selectFrom('documents')
            .select('locale')
            .where('id', '=', documentId)
            .executeTakeFirstOrThrow()
        ).locale;
      const generated = await e.api('POST', `/v1/templates/${tpl.id}/generate`, { field_values: VALUES });
      assert.equal(generated.status, 201, generated.text);
      assert.equal(await localeOf(generated.json.template_instance.document_id), 'de');

      const bulk = await e.api('POST', `/v1/templates/${tpl.id}/bulk-sends`, {
        rows: [
          { recipients: recipients(), field_values: VALUES },
          { recipients: recipients(), field_values: VALUES, locale: 'fr' },
        ],
      });
      assert.equal(bulk.status, 202, bulk.text);
      await e.work();
      const b = (await e.api('GET', `/v1/bulk-sends/${bulk.json.bulk_send.id}`)).json.bulk_send;
      const docs = await Promise.all(
        b.rows.map(async (row: { template_instance_id: string }) => {
          const ti = await e.api('GET', `/v1/template-instances/${row.template_instance_id}`);
          return localeOf(ti.json.document_id);
        }),
      );
      assert.deepEqual(docs, ['de', 'fr']);

      await owner.get(`/dashboard/templates/${tpl.id}/use`);
      const used = await owner.post(`/dashboard/templates/${tpl.id}/use`, {
        'client.name': 'Client Person',
        'client.email': someone(),
        'provider.name': 'Provider Person',
        'provider.email': someone(),
        client_name: 'Ada Ltd',
        plan: 'pro',
        seats: '12',
        start_date: '2026-12-01',
      });
      assert.equal(used.status, 303, used.text.slice(0, 800));
      const doc = /^\/dashboard\/documents\/(doc_[0-9a-f]+)$/.exec(used.headers.location ?? '')?.[1];
      assert.ok(doc, `to the document: ${used.headers.location}`);
      await expectSent(doc, 'de');
    });

    test('the dashboard send form preselects the default, or the page’s language without one', async () => {
      assert.equal((await setLanguage(owner, 'sv')).status, 303);
      const selected = (text: string) =>
        [...text.matchAll(/<option value="([a-z]+)" lang="[a-z]+" selected>/g)].map((m) => m[1]);
      assert.deepEqual(selected((await owner.get('/dashboard/send')).text), ['sv']);
      assert.equal((await setLanguage(owner, '')).status, 303);
      assert.deepEqual(selected((await owner.get('/dashboard/send')).text), ['en'], 'as before: the page’s');
    });

    test('members read it and cannot change it; a tag not in the list is refused beside the field', async () => {
      assert.equal((await setLanguage(owner, 'ja')).status, 303);
      const seen = await member.get('/dashboard/settings');
      assert.match(seen.text, /<p id="language-now">Now: <strong lang="ja">日本語<\/strong>\.<\/p>/);
      assert.doesNotMatch(seen.text, /id="default-locale"/, 'no form for members');
      assert.equal((await member.post('/dashboard/settings/language', { locale: 'fr' })).status, 403);

      const bad = await setLanguage(owner, 'xx');
      assert.equal(bad.status, 400);
      assert.match(bad.text, /<select id="default-locale" name="locale" aria-invalid="true"/);
      assert.match(bad.text, /<small id="language-error" class="field-error">Choose a language from the list\./);

      const row = await e.h.db.kysely
        .selectFrom('workspaces')
        .select('default_locale')
        .where('id', '=', e.workspaceId)
        .executeTakeFirstOrThrow();
      assert.equal(row.default_locale, 'ja', 'neither the member nor the bad tag changed it');

      assert.equal((await setLanguage(owner, '')).status, 303);
      const english = await create();
      await expectSent(english.r.json.document_id, 'en');

      const audit = await e.h.db.kysely
        .selectFrom('audit_log')
        .select(['actor', 'detail'])
        .where('workspace_id', '=', e.workspaceId)
        .where('action', '=', 'workspace.locale_set')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        audit.map((a) => JSON.parse(a.detail!).locale),
        ['de', 'de', 'sv', null, 'ja', null],
      );
      assert.ok(
        audit.every((a) => /^user:owner\./.test(a.actor)),
        'the actor is the owner',
      );
    });
  });
}
