// Signer verification end to end, on SQLite and PostgreSQL: the real app on a real port, codes taken from the mail
// at the SMTP peer and from the SMS outbox, the clock moved by hand. Before the code, neither the page, the PDF, the
// info nor the view/sign/decline actions serve the document; wrong and expired codes are refused, the sixth try is
// locked, sends are limited, a code for one signer never passes another, and the audit trail records it all.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ParsedMail } from 'mailparser';
import {
  VERIFICATION_CODE_TTL_MS,
  VERIFICATION_MAX_TRIES,
  VERIFICATION_SENDS_PER_HOUR,
  VERIFICATION_SENDS_TOTAL,
} from '../limits.js';
import { setAllowedOrigins } from '../keys/keys.repo.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { plainPdf, signers } from './testing/requests.js';

const databases = await bothDatabases();
const HOUR = 3_600_000;

const addressedTo = (m: ParsedMail, email: string) =>
  (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === email));

for (const d of databases) {
  describe(`signer verification (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database });
    });
    after(() => e.close());

    async function create(people: Array<Record<string, unknown>>, token = e.token) {
      const r = await e.h.request('POST', '/v1/signing-requests', {
        token,
        body: {
          signers: people,
          file: { name: 'nda.pdf', content_base64: await plainPdf(1) },
          placement: 'auto_append',
        },
      });
      assert.equal(r.status, 201, r.text);
      await e.work();
      return r.json.document_id as string;
    }
    /** The newest code mailed to `email`. */
    async function mailedCode(email: string): Promise<string> {
      await e.work();
      const mails = (await e.smtp.parsed()).filter((m) => addressedTo(m, email) && /verification/i.test(m.subject!));
      assert.ok(mails.length > 0, `a code mail reached ${email}`);
      const code = /^(\d{6})$/m.exec(mails[mails.length - 1]!.text ?? '')?.[1];
      assert.ok(code, 'the mail carries a six-digit code');
      return code;
    }
    const post = (token: string, what: string, body: unknown = {}) =>
      e.h.request('POST', `/sign/${token}/${what}`, { body });
    const form = (token: string, what: string, fields: string) =>
      e.h.request('POST', `/sign/${token}/verification/${what}`, {
        rawBody: fields,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });

    test('e-mail code: nothing is served before it; wrong, locked, expired, then passed; the audit trail', async () => {
      const [s] = signers(1);
      const docId = await create([{ ...s!, verification: 'email_code' }]);
      const token = await e.linkFor(s!.email);

      const page = await e.h.request('GET', `/sign/${token}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /data-state="verification"/);
      assert.ok(!page.text.includes('signer-data'), 'the gate carries no document data');
      assert.match(page.text, /s\*\*\*@example\.com/);
      for (const [method, path, body] of [
        ['GET', 'document.pdf', undefined],
        ['GET', 'info', undefined],
        ['POST', 'view', {}],
        ['POST', 'sign', { signature: { type: 'typed', text: 'Me' } }],
        ['POST', 'decline', { reason: 'no' }],
      ] as const) {
        const r = await e.h.request(method, `/sign/${token}/${path}`, body ? { body } : {});
        assert.equal(r.status, 403, `${path}: ${r.text}`);
        assert.equal(r.json.code, 'verification_required');
      }
      assert.equal((await post(token, 'verification/check', { code: '000000' })).json.code, 'verification_no_code');

      // A code, then five wrong tries; the sixth (even the right code) is locked.
      const sent = await post(token, 'verification/send');
      assert.equal(sent.status, 200, sent.text);
      assert.equal(sent.json.status, 'sent');
      const first = await mailedCode(s!.email);
      const wrong = first === '111111' ? '222222' : '111111';
      for (let i = 1; i <= VERIFICATION_MAX_TRIES; i++) {
        const r = await post(token, 'verification/check', { code: wrong });
        assert.equal(r.status, 422, r.text);
        assert.equal(r.json.code, 'verification_code_invalid');
        assert.equal(r.json.meta.tries_left, VERIFICATION_MAX_TRIES - i);
      }
      const locked = await post(token, 'verification/check', { code: first });
      assert.equal(locked.status, 409, locked.text);
      assert.equal(locked.json.code, 'verification_locked');

      // A new code that expires unused.
      await post(token, 'verification/send');
      const second = await mailedCode(s!.email);
      e.h.clock.advance(VERIFICATION_CODE_TTL_MS);
      const expired = await post(token, 'verification/check', { code: second });
      assert.equal(expired.status, 410, expired.text + ' ' + second);
      assert.equal(expired.json.code, 'verification_code_expired');

      // A third code passes; the document is served and signed.
      await post(token, 'verification/send');
      const third = await mailedCode(s!.email);
      assert.equal((await post(token, 'verification/check', { code: first === third ? wrong : first })).status, 422);
      const ok = await post(token, 'verification/check', { code: ` ${third.slice(0, 3)} ${third.slice(3)} ` });
      assert.equal(ok.status, 200, ok.text);
      assert.match((await e.h.request('GET', `/sign/${token}`)).text, /signer-data/);
      assert.equal((await e.h.request('GET', `/sign/${token}/document.pdf`)).status, 200);
      assert.equal((await post(token, 'view')).status, 200);
      const signed = await post(token, 'sign', { signature: { type: 'typed', text: 'Me' } });
      assert.equal(signed.status, 200, signed.text);
      await e.work();

      const trail = await e.api('GET', `/v1/documents/${docId}/audit-trail`);
      assert.equal(trail.status, 200, trail.text);
      const actions = trail.json.entries.map((x: any) => x.action) as string[];
      const count = (a: string) => actions.filter((x) => x === a).length;
      assert.equal(count('signer.verification_sent'), 3);
      assert.equal(count('signer.verification_failed'), VERIFICATION_MAX_TRIES + 1);
      assert.equal(count('signer.verification_locked'), 1);
      assert.equal(count('signer.verification_passed'), 1);
      const sentEntry = trail.json.entries.find((x: any) => x.action === 'signer.verification_sent');
      assert.deepEqual(
        [sentEntry.detail.method, sentEntry.detail.destination],
        ['email_code', `s***@${s!.email.split('@')[1]}`],
      );
      const passed = trail.json.entries.find((x: any) => x.action === 'signer.verification_passed');
      assert.equal(passed.detail.method, 'email_code');
      assert.ok(actions.indexOf('signer.verification_passed') < actions.indexOf('signing_request.signed'), 'order');
      for (const c of [first, second, third]) assert.ok(!trail.text.includes(c), 'no code is in the audit trail');
      const stored = await e.h.db.kysely.selectFrom('signer_codes').selectAll().execute();
      for (const c of [first, second, third])
        assert.ok(!JSON.stringify(stored).includes(`"${c}"`), 'codes are stored hashed');
      assert.equal(trail.json.chain_valid, true);
    });

    test('plain forms (no JavaScript): 303 back to the gate with what happened', async () => {
      const [s] = signers(1);
      await create([{ ...s!, verification: 'email_code' }]);
      const token = await e.linkFor(s!.email);
      const sent = await form(token, 'send', '');
      assert.equal(sent.status, 303);
      assert.equal(sent.headers.location, `/sign/${token}?v=sent`);
      const page = await e.h.request('GET', sent.headers.location!);
      assert.match(page.text, /We sent a code to s\*\*\*@/);
      assert.match(page.text, /name="code"/);
      const code = await mailedCode(s!.email);
      const wrong = await form(token, 'check', `code=${code === '123456' ? '654321' : '123456'}`);
      assert.equal(wrong.headers.location, `/sign/${token}?v=wrong`);
      assert.match((await e.h.request('GET', wrong.headers.location!)).text, /Tries left: 4/);
      const right = await form(token, 'check', `code=${code}`);
      assert.equal(right.status, 303);
      assert.equal(right.headers.location, `/sign/${token}`);
      assert.match((await e.h.request('GET', `/sign/${token}`)).text, /signer-data/);
    });

    test('a code for one signer never passes another', async () => {
      const [a, b] = signers(2);
      await create([
        { ...a!, verification: 'email_code' },
        { ...b!, verification: 'email_code' },
      ]);
      const [ta, tb] = [await e.linkFor(a!.email), await e.linkFor(b!.email)];
      await post(ta, 'verification/send');
      await post(tb, 'verification/send');
      const [ca, cb] = [await mailedCode(a!.email), await mailedCode(b!.email)];
      if (ca !== cb) assert.equal((await post(tb, 'verification/check', { code: ca })).status, 422);
      assert.equal((await e.h.request('GET', `/sign/${tb}/document.pdf`)).status, 403);
      assert.equal((await post(ta, 'verification/check', { code: ca })).status, 200);
      assert.equal((await e.h.request('GET', `/sign/${tb}/document.pdf`)).status, 403, 'B is still gated');
    });

    test(`send limit: ${VERIFICATION_SENDS_PER_HOUR} an hour, ${VERIFICATION_SENDS_TOTAL} in all`, async () => {
      const [s] = signers(1);
      await create([{ ...s!, verification: 'email_code' }]);
      const token = await e.linkFor(s!.email);
      for (let i = 0; i < VERIFICATION_SENDS_PER_HOUR; i++)
        assert.equal((await post(token, 'verification/send')).status, 200);
      const over = await post(token, 'verification/send');
      assert.equal(over.status, 429, over.text);
      assert.equal(over.json.code, 'verification_send_limit');
      assert.equal(over.json.meta.limit, 'hour');
      assert.equal(over.headers['retry-after'], '3600');
      assert.match((await form(token, 'send', '')).headers.location!, /\?v=limit&m=60$/);
      e.h.clock.advance(HOUR + 1000);
      for (let i = VERIFICATION_SENDS_PER_HOUR; i < VERIFICATION_SENDS_TOTAL; i++)
        assert.equal((await post(token, 'verification/send')).status, 200);
      e.h.clock.advance(HOUR + 1000);
      const done = await post(token, 'verification/send');
      assert.equal(done.status, 429);
      assert.equal(done.json.meta.limit, 'total');
      assert.match((await form(token, 'send', '')).headers.location!, /\?v=limit_total$/);
      assert.match((await e.h.request('GET', `/sign/${token}?v=limit_total`)).text, /No more codes/);
    });

    test('the embed page: the gate inside the frame, its actions under the session, nothing served before', async () => {
      const ent = await e.h.tenant('enterprise');
      await setAllowedOrigins(e.h.db.kysely, ent.keyId, ['https://host.example']);
      const [s] = signers(1);
      const docId = await create([{ ...s!, verification: 'email_code' }], ent.token);
      const doc = await e.h.request('GET', `/v1/documents/${docId}`, { token: ent.token });
      const minted = await e.h.request('POST', '/v1/embedded/sign-sessions', {
        token: ent.token,
        body: {
          signing_request_id: doc.json.signing_requests[0].id,
          origin: 'https://host.example',
          ttl_seconds: 600,
          locale: 'de',
        },
      });
      assert.equal(minted.status, 201, minted.text);
      const base = new URL(minted.json.url).pathname;
      const page = await e.h.request('GET', base);
      assert.match(page.text, /data-state="verification"/);
      assert.match(page.text, /Bestätigen Sie, dass Sie es sind/);
      assert.match(page.headers['content-security-policy']!, /frame-ancestors https:\/\/host\.example/);
      assert.equal((await e.h.request('GET', `${base}/document.pdf`)).json.code, 'verification_required');
      assert.equal((await e.h.request('POST', `${base}/view`, { body: {} })).status, 403);
      const sent = await e.h.request('POST', `${base}/verification/send`, {
        rawBody: '',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(sent.headers.location, `${base}?v=sent`);
      const code = await mailedCode(s!.email);
      assert.equal((await e.h.request('POST', `${base}/verification/check`, { body: { code } })).status, 200);
      assert.equal((await e.h.request('GET', `${base}/document.pdf`)).status, 200);
      const trail = await e.h.request('GET', `/v1/documents/${docId}/audit-trail`, { token: ent.token });
      const passed = trail.json.entries.find((x: any) => x.action === 'signer.verification_passed');
      assert.equal(passed.detail.embedded_session.origin, 'https://host.example');
    });

    test('SMS code: Enterprise only (402), needs a phone (422), the code goes by SMS', async () => {
      const [s] = signers(1);
      const body = (extra: Record<string, unknown>) => ({
        signers: [{ ...s!, ...extra }],
        file: { name: 'nda.pdf', content_base64: 'JVBERi0=' },
        placement: 'auto_append',
      });
      const refused = await e.api(
        'POST',
        '/v1/signing-requests',
        body({ verification: 'sms_code', phone: '+14155550100' }),
      );
      assert.equal(refused.status, 402, refused.text);
      assert.equal(refused.json.code, 'enterprise-required');
      const ent = await e.h.tenant('enterprise');
      const call = (b: unknown) => e.h.request('POST', '/v1/signing-requests', { token: ent.token, body: b });
      const noPhone = await call(body({ verification: 'sms_code' }));
      assert.equal(noPhone.status, 422, noPhone.text);
      assert.equal(noPhone.json.code, 'invalid_recipients');
      assert.equal(noPhone.json.meta.problems[0].code, 'phone_required');
      const badPhone = await call(body({ verification: 'sms_code', phone: '0155 5555' }));
      assert.equal(badPhone.json.code, 'invalid_recipients');
      assert.equal(badPhone.json.meta.problems[0].code, 'invalid_phone');

      const docId = await create([{ ...s!, verification: 'sms_code', phone: '+14155550100' }], ent.token);
      const token = await e.linkFor(s!.email);
      assert.match((await e.h.request('GET', `/sign/${token}`)).text, /\+14\*+00/);
      assert.equal((await post(token, 'verification/send')).status, 200);
      await e.work();
      const texts = await e.h.db.kysely.selectFrom('sms_outbox').selectAll().where('document_id', '=', docId).execute();
      assert.equal(texts.length, 1);
      assert.equal(texts[0]!.to_phone, '+14155550100');
      assert.equal(texts[0]!.template, 'verification_code');
      const code = /^(\d{6}) /.exec(texts[0]!.body)?.[1];
      assert.ok(code, texts[0]!.body);
      assert.equal((await post(token, 'verification/check', { code })).status, 200);
      assert.equal((await e.h.request('GET', `/sign/${token}/document.pdf`)).status, 200);
    });
  });
}
