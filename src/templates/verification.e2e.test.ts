// Signer verification on template recipients, on SQLite and PostgreSQL: a recipient's `verification` given at
// instantiate (sent at once, or staged and confirmed) or in confirm's replacement recipients reaches its signing
// request. Each gated signer sees the gate, is refused the document (403 verification_required) until the code that
// arrived by mail or SMS is entered, then is served and signs; an ungated recipient is never asked. `sms_code` is
// Enterprise-only (402) at instantiate and at confirm.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ParsedMail } from 'mailparser';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { templateBody, VALUES } from './testing/fixtures.js';
import { email } from './testing/e2e.js';

const databases = await bothDatabases();
const LINK = /\/sign\/([A-Za-z0-9_-]{43})/;

const addressedTo = (m: ParsedMail, to: string) =>
  (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === to));

/** A fresh E.164 test number (US 415-555-01xx is reserved for fiction). */
let seq = 0;
const phone = () => `+1415555${String(100 + (seq++ % 900)).padStart(4, '0')}`;

type Recipient = Record<string, unknown> & { slot: string };
type Mode = 'direct' | 'review' | 'replace';

for (const d of databases) {
  describe(`verification on template recipients (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let ent: { token: string };
    const tpls = new Map<string, string>();
    before(async () => {
      e = await startE2E({ database: d.database });
      ent = await e.h.tenant('enterprise');
    });
    after(() => e.close());

    const call = (token: string, method: string, p: string, body?: unknown) => e.h.request(method, p, { token, body });
    async function template(token: string): Promise<string> {
      if (!tpls.has(token)) {
        const r = await call(token, 'POST', '/v1/templates', await templateBody());
        assert.equal(r.status, 201, r.text);
        tpls.set(token, r.json.id);
      }
      return tpls.get(token)!;
    }
    const texts = (docId: string, template: string, to: string) =>
      e.h.db.kysely
        .selectFrom('sms_outbox')
        .selectAll()
        .where('document_id', '=', docId)
        .where('template', '=', template)
        .where('to_phone', '=', to)
        .orderBy('created_at')
        .execute();

    /**
     * Instantiates with `recipients` and, per mode, sends at once, or stages and confirms (with `replacement` as
     * confirm's recipients in mode `replace`); returns the document.
     */
    async function open(token: string, mode: Mode, recipients: Recipient[], replacement?: Recipient[]) {
      const tplId = await template(token);
      const r = await call(token, 'POST', `/v1/templates/${tplId}/instantiate`, {
        recipients,
        field_values: VALUES,
        review: mode !== 'direct',
      });
      assert.equal(r.status, 201, r.text);
      const ti = r.json.template_instance;
      assert.ok(
        !JSON.stringify(ti.recipients).includes('verification'),
        'the answer shows recipients without verification',
      );
      if (mode !== 'direct') {
        await e.work();
        const invited = await e.h.db.kysely
          .selectFrom('signing_requests')
          .select('id')
          .where('document_id', '=', ti.document_id)
          .execute();
        assert.equal(invited.length, 0, 'a staged instance invites nobody');
        const c = await call(token, 'POST', `/v1/template-instances/${ti.id}/confirm`, {
          ...(mode === 'replace' ? { recipients: replacement } : {}),
        });
        assert.equal(c.status, 200, c.text);
      }
      await e.work();
      return ti.document_id as string;
    }

    /** The signer's link: from their SMS on channel sms, else from their mail. */
    async function linkOf(docId: string, r: Recipient): Promise<string> {
      if (r.channel === 'sms') {
        const [invite] = await texts(docId, 'invitation', r.phone as string);
        assert.ok(invite, `an invitation SMS reached ${String(r.phone)}`);
        return LINK.exec(invite.body)![1]!;
      }
      return e.linkFor(r.email as string);
    }

    /** The newest code sent to `r` by `method`. */
    async function codeFor(docId: string, r: Recipient, method: string): Promise<string> {
      await e.work();
      if (method === 'sms_code') {
        const sent = await texts(docId, 'verification_code', r.phone as string);
        assert.equal(sent.length, 1, `one code SMS to ${String(r.phone)}`);
        const code = /^(\d{6}) /.exec(sent[0]!.body)?.[1];
        assert.ok(code, `the SMS starts with the code: ${sent[0]!.body}`);
        return code;
      }
      const mails = (await e.smtp.parsed()).filter(
        (m) => addressedTo(m, r.email as string) && /verification/i.test(m.subject!),
      );
      assert.equal(mails.length, 1, `one code mail to ${String(r.email)}`);
      const code = /^(\d{6})$/m.exec(mails[0]!.text ?? '')?.[1];
      assert.ok(code, 'the mail carries a six-digit code');
      return code;
    }

    /** Gate, refusal, code, pass, signature; the audit trail names the method. */
    async function passesGate(token: string, docId: string, r: Recipient, method: string) {
      const link = await linkOf(docId, r);
      const page = await e.h.request('GET', `/sign/${link}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /data-state="verification"/);
      assert.ok(!page.text.includes('signer-data'), 'the gate carries no document data');
      for (const [m, p] of [
        ['GET', 'document.pdf'],
        ['POST', 'view'],
      ] as const) {
        const refused = await e.h.request(m, `/sign/${link}/${p}`, m === 'POST' ? { body: {} } : {});
        assert.equal(refused.status, 403, `${p} before the code: ${refused.text}`);
        assert.equal(refused.json.code, 'verification_required');
        assert.equal(refused.json.meta.verification, method);
      }
      const sent = await e.h.request('POST', `/sign/${link}/verification/send`, { body: {} });
      assert.equal(sent.status, 200, sent.text);
      const code = await codeFor(docId, r, method);
      const ok = await e.h.request('POST', `/sign/${link}/verification/check`, { body: { code } });
      assert.equal(ok.status, 200, ok.text);
      assert.match((await e.h.request('GET', `/sign/${link}`)).text, /signer-data/);
      assert.equal((await e.h.request('GET', `/sign/${link}/document.pdf`)).status, 200);
      await signs(link);
      const trail = await call(token, 'GET', `/v1/documents/${docId}/audit-trail`);
      const passed = trail.json.entries.filter((x: any) => x.action === 'signer.verification_passed');
      assert.ok(
        passed.some((x: any) => x.detail.method === method),
        `the audit trail records ${method} passed`,
      );
    }
    async function signs(link: string) {
      assert.equal((await e.h.request('POST', `/sign/${link}/view`, { body: {} })).status, 200);
      const s = await e.h.request('POST', `/sign/${link}/sign`, { body: { signature: { type: 'typed', text: 'Me' } } });
      assert.equal(s.status, 200, s.text);
      await e.work();
    }
    async function completed(token: string, docId: string) {
      assert.equal((await call(token, 'GET', `/v1/documents/${docId}`)).json.status, 'completed');
    }

    for (const mode of ['direct', 'review', 'replace'] as const) {
      test(`email_code (${mode}): the client passes the gate, the provider is never asked`, async () => {
        const client = { slot: 'client', name: 'Client Person', email: email('client') };
        const provider = { slot: 'provider', name: 'Provider Person', email: email('provider') };
        const gated = { ...client, verification: 'email_code' };
        const docId =
          mode === 'replace'
            ? // Staged without verification, confirmed with it: the replacement decides.
              await open(e.token, mode, [client, provider], [gated, provider])
            : await open(e.token, mode, [gated, provider]);
        await passesGate(e.token, docId, gated, 'email_code');
        const second = await e.linkFor(provider.email);
        assert.match((await e.h.request('GET', `/sign/${second}`)).text, /signer-data/, 'no gate for the provider');
        await signs(second);
        await completed(e.token, docId);
      });

      test(`sms_code on Enterprise (${mode}): e-mail and SMS channels, codes by SMS`, async () => {
        // The client signs by e-mail link with a phone for the code; the provider is on the SMS channel (its
        // phone is the code's number too) and signs in the same turn.
        const client = { slot: 'client', name: 'Client Person', email: email('client'), phone: phone() };
        const provider = { slot: 'provider', name: 'Provider', channel: 'sms', phone: phone(), signing_order: 1 };
        const gated = [
          { ...client, verification: 'sms_code' },
          { ...provider, verification: 'sms_code' },
        ];
        const docId =
          mode === 'replace'
            ? await open(ent.token, mode, [client, { ...provider, channel: 'email', email: email('p') }], gated)
            : await open(ent.token, mode, gated);
        for (const r of gated) await passesGate(ent.token, docId, r, 'sms_code');
        await completed(ent.token, docId);
      });
    }

    test('a replacement without verification drops the staged one', async () => {
      const client = { slot: 'client', name: 'Client Person', email: email('client') };
      const provider = { slot: 'provider', name: 'Provider Person', email: email('provider') };
      await open(e.token, 'replace', [{ ...client, verification: 'email_code' }, provider], [client, provider]);
      const link = await e.linkFor(client.email);
      assert.match((await e.h.request('GET', `/sign/${link}`)).text, /signer-data/);
      await signs(link);
    });

    test('sms_code below Enterprise: 402 at instantiate and at confirm, nothing created or sent', async () => {
      const tplId = await template(e.token);
      const client = { slot: 'client', name: 'C', email: email('client') };
      const provider = { slot: 'provider', name: 'P', email: email('provider') };
      const gated = { ...client, phone: phone(), verification: 'sms_code' };
      const count = async (t: 'template_instances' | 'signing_requests') =>
        (await e.h.db.kysely.selectFrom(t).select('id').execute()).length;
      const before = await count('template_instances');
      const refused = await call(e.token, 'POST', `/v1/templates/${tplId}/instantiate`, {
        recipients: [gated, provider],
        field_values: VALUES,
      });
      assert.equal(refused.status, 402, refused.text);
      assert.equal(refused.json.code, 'enterprise-required');
      assert.equal(await count('template_instances'), before, 'nothing created');

      const staged = await call(e.token, 'POST', `/v1/templates/${tplId}/instantiate`, {
        recipients: [client, provider],
        field_values: VALUES,
        review: true,
      });
      assert.equal(staged.status, 201, staged.text);
      const requests = await count('signing_requests');
      const ti = staged.json.template_instance;
      const confirm = await call(e.token, 'POST', `/v1/template-instances/${ti.id}/confirm`, {
        recipients: [gated, provider],
      });
      assert.equal(confirm.status, 402, confirm.text);
      assert.equal(confirm.json.code, 'enterprise-required');
      assert.equal(await count('signing_requests'), requests, 'nobody invited');
      assert.equal((await call(e.token, 'GET', `/v1/template-instances/${ti.id}`)).json.status, 'staged');
    });
  });
}
