// Signing requests end to end, through HTTP only: invitations arrive at a real SMTP peer, links come from the
// e-mails, signers act through the signer endpoints, events arrive at a real receiver (verified by Stripe's code).
// Declining, withdrawing and expiry: signing.closing.e2e.test.ts; refusals: signing.refusals.e2e.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { makePdf, makePng } from '../documents/pdf/testing/fixtures.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { verifyChain } from '../documents/audit.repo.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { plainPdf, signers } from './testing/requests.js';
import { localCaPem } from './testing/complete.js';
import { assertPadesLta } from '../documents/pdf/testing/pades.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const has = (cmd: string) => !spawnSync(cmd, ['-v']).error;

async function sign(
  e: E2E,
  token: string,
  signature: Record<string, unknown> = { type: 'typed', text: 'Signed Name' },
) {
  const v = await e.h.request('POST', `/sign/${token}/view`, { headers: { 'user-agent': 'e2e-browser/1.0' } });
  assert.equal(v.status, 200, v.text);
  const s = await e.h.request('POST', `/sign/${token}/sign`, {
    body: { signature },
    headers: { 'user-agent': 'e2e-browser/1.0' },
  });
  assert.equal(s.status, 200, s.text);
}

describe('signing requests end to end', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(() => e.close());

  test('parallel, two signers: invitations, viewed/signed events, sealed PDF, audit trail, document.completed', async (t) => {
    const people = signers(2);
    const created = await e.api('POST', '/v1/signing-requests', {
      signers: people,
      file: { name: 'msa.pdf', content_base64: await plainPdf() },
      placement: 'auto_append',
      title: 'Master services agreement',
      message: 'Please sign by Friday.',
      locale: 'en',
    });
    assert.equal(created.status, 201, created.text);
    const c = created.json;
    assert.match(c.document_id, /^doc_/);
    assert.equal(c.status, 'in_progress');
    assert.equal(c.signing_order, 'parallel');
    assert.match(c.expires_at, ISO_MS);
    assert.equal(Date.parse(c.expires_at) - e.h.clock.now(), 30 * 24 * 3600_000, 'default expiry is 30 days');
    assert.equal(c.signing_requests.length, 2);
    c.signing_requests.forEach((r: any, i: number) => {
      assert.match(r.id, /^sr_/);
      assert.equal(r.status, 'pending');
      assert.deepEqual(r.signer, {
        email: people[i]!.email,
        role: people[i]!.role,
        name: people[i]!.name,
        slot: i + 1,
      });
      assert.equal(r.expires_at, c.expires_at);
    });
    assert.ok(!created.text.includes('/sign/'), 'the API never returns signer links');
    assert.equal(c.callback, undefined);

    await e.work();
    const sent = e.eventsOf('signing_request.sent', c.document_id);
    assert.equal(sent.length, 2);
    for (const [i, ev] of sent.sort((a, b) => a.signer.slot - b.signer.slot).entries()) {
      assert.deepEqual(Object.keys(ev).sort(), [
        'created_at',
        'document_id',
        'event',
        'event_id',
        'locale',
        'signer',
        'signing_request_id',
        'source',
        'workspace_id',
      ]);
      assert.equal(ev.signing_request_id, c.signing_requests[i].id);
      assert.deepEqual(ev.signer, {
        email: people[i]!.email,
        role: people[i]!.role,
        name: people[i]!.name,
        slot: i + 1,
      });
      assert.equal(ev.locale, 'en');
      assert.equal(ev.source, 'v1_api');
      assert.equal(ev.workspace_id, e.workspaceId);
      assert.match(ev.event_id, /^evt_[0-9a-f]{32}$/);
      assert.match(ev.created_at, ISO_MS);
    }
    const [t1, t2] = [await e.linkFor(people[0]!.email), await e.linkFor(people[1]!.email)];
    const mail = (await e.smtp.parsed()).find((m) => m.text?.includes(t1))!;
    assert.match(mail.subject ?? '', /Master services agreement/);
    assert.match(mail.text ?? '', /Please sign by Friday\./);

    // The signing page and the PDF it renders.
    const page = await e.h.request('GET', `/sign/${t1}`);
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type']!, /text\/html/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    const pdf = await e.h.request('GET', `/sign/${t1}/document.pdf`);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');

    await e.h.request('POST', `/sign/${t1}/view`, { headers: { 'user-agent': 'e2e-browser/1.0' } });
    await e.h.request('POST', `/sign/${t1}/view`);
    await e.work();
    const viewed = e.eventsOf('signing_request.viewed', c.document_id);
    assert.equal(viewed.length, 1, 'viewed is emitted once');
    assert.deepEqual(viewed[0]!.signer, { email: people[0]!.email, name: people[0]!.name });
    assert.equal(viewed[0]!.signing_request_id, c.signing_requests[0].id);

    // Not signed yet: the sealed PDF is not there.
    const early = await e.api('GET', `/v1/documents/${c.document_id}/signed`);
    assert.equal(early.status, 409);
    assert.equal(early.json.code, 'document_not_completed');

    await sign(e, t1, { type: 'typed', text: 'Signer One' });
    const doc0 = await e.api('GET', `/v1/documents/${c.document_id}`);
    assert.equal(doc0.json.status, 'in_progress');
    assert.deepEqual(
      doc0.json.signing_requests.map((x: any) => x.status),
      ['signed', 'pending'],
    );
    await sign(e, t2, { type: 'drawn', png_base64: b64(makePng(240, 80)) });
    await e.work();

    const signed = e.eventsOf('signing_request.signed', c.document_id);
    assert.equal(signed.length, 2);
    for (const ev of signed) {
      assert.deepEqual(Object.keys(ev).sort(), [
        'created_at',
        'document_id',
        'event',
        'event_id',
        'sha256',
        'signer',
        'signing_request_id',
        'workspace_id',
      ]);
      assert.match(ev.sha256, /^[0-9a-f]{64}$/);
    }
    const completed = e.eventsOf('document.completed', c.document_id);
    assert.equal(completed.length, 1);
    const dc = completed[0]!;
    assert.equal(dc.signing_request_id, c.signing_requests[1].id, 'the final signer');
    assert.deepEqual(dc.signer, { email: people[1]!.email, name: people[1]!.name });
    assert.equal(dc.signed_pdf_url, `${e.h.config.baseUrl}/v1/documents/${c.document_id}/signed`);
    assert.equal(dc.audit_trail_url, `${e.h.config.baseUrl}/v1/documents/${c.document_id}/audit-trail`);
    assert.match(dc.sha256, /^[0-9a-f]{64}$/);
    assert.match(dc.cert_serial, /^[0-9a-f]+$/);
    assert.equal(typeof dc.tsa_provider, 'string');
    assert.match(dc.tsa_signed_at, ISO_MS);

    const doc = await e.api('GET', `/v1/documents/${c.document_id}`);
    assert.equal(doc.json.status, 'completed');
    assert.equal(doc.json.signed_sha256, dc.sha256);
    assert.ok(
      doc.json.signing_requests.every((r: any) => r.status === 'signed'),
      "doc.json.signing_requests.every((r: any) => r.status === 'signed')",
    );

    const file = await e.api('GET', `/v1/documents/${c.document_id}/signed`);
    assert.equal(file.status, 200);
    assert.equal(file.headers['content-type'], 'application/pdf');
    const raw = await e.h.app.inject({
      method: 'GET',
      url: `/v1/documents/${c.document_id}/signed`,
      headers: { authorization: `Bearer ${e.token}` },
    });
    const bytes = raw.rawPayload;
    assert.equal((await import('node:crypto')).createHash('sha256').update(bytes).digest('hex'), dc.sha256);
    // Independent checkers: required under CI (.ci/run installs them); elsewhere their absence is said, not hidden.
    const tools = ['pdfsig', 'qpdf', 'pdftotext'];
    if (process.env.CI === 'true' || tools.every(has)) {
      const tmp = await pdfScratch('signet-e2e-');
      try {
        // B-LTA: pdfsig, qpdf and openssl on the seal, the DSS, the document timestamp and the CRL.
        assertPadesLta(tmp, bytes, await localCaPem(e), dc.tsa_signed_at);
        const text = tmp.pdfText(bytes);
        assert.match(text, new RegExp(people[0]!.email.replace('.', '\\.')), 'the audit page lists the signers');
        assert.match(text, new RegExp(doc.json.sha256), "the audit page carries the original's SHA-256");
      } finally {
        await tmp.cleanup();
      }
    } else {
      t.diagnostic(
        `sealed-PDF checks skipped: ${tools.filter((c) => !has(c)).join(', ')} not installed (poppler-utils, qpdf)`,
      );
    }

    const trail = await e.api('GET', `/v1/documents/${c.document_id}/audit-trail`);
    assert.equal(trail.status, 200);
    assert.equal(trail.json.chain_valid, true);
    const actions = trail.json.entries.map((x: any) => x.action);
    assert.deepEqual(actions, [
      'document.created',
      'signing_request.sent',
      'signing_request.sent',
      'signing_request.viewed',
      'signing_request.signed',
      'signing_request.viewed',
      'signing_request.signed',
      'document.all_signed',
      'document.completed',
      'signer_copy.sent',
      'signer_copy.sent',
    ]);
    const signedEntry = trail.json.entries.find((x: any) => x.action === 'signing_request.signed');
    assert.equal(signedEntry.ip, '127.0.0.1');
    assert.equal(signedEntry.user_agent, 'e2e-browser/1.0');
    assert.equal(verifyChain(c.document_id, trail.json.entries), null);
    const tampered = structuredClone(trail.json.entries);
    tampered[3].ip = '10.0.0.1';
    assert.equal(verifyChain(c.document_id, tampered), 4, 'an edited entry breaks the chain');
    const pdfTrail = await e.h.request('GET', `/v1/documents/${c.document_id}/audit-trail`, {
      token: e.token,
      headers: { accept: 'application/pdf' },
    });
    assert.equal(pdfTrail.status, 200);
    assert.equal(pdfTrail.headers['content-type'], 'application/pdf');

    // After completion every signer action is refused, and nothing is emitted again.
    const again = await e.h.request('POST', `/sign/${t1}/sign`, { body: { signature: { type: 'typed', text: 'x' } } });
    assert.equal(again.status, 409);
    assert.equal(again.json.code, 'request_not_signable');
    await e.work();
    assert.equal(e.eventsOf('document.completed', c.document_id).length, 1);
    assert.equal(e.eventsOf('signing_request.signed', c.document_id).length, 2);
    const closedPage = await e.h.request('GET', `/sign/${t1}`);
    assert.match(closedPage.text, /data-state="signed"/);
  });

  test('sequential, five signers: one sent event each at creation, invitations one at a time, none re-emitted', async () => {
    const people = signers(5);
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: people,
      file: { name: 'nda.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
      signing_order: 'sequential',
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(
      r.json.signing_requests.map((x: any) => x.status),
      ['pending', 'queued', 'queued', 'queued', 'queued'],
    );
    await e.work();
    assert.equal(e.eventsOf('signing_request.sent', r.json.document_id).length, 5);
    for (let i = 0; i < 5; i++) {
      for (let j = i + 1; j < 5; j++)
        assert.deepEqual(await e.linksFor(people[j]!.email), [], `signer ${j + 1} not invited yet`);
      const tk = await e.linkFor(people[i]!.email);
      // A queued signer cannot act before release.
      await sign(e, tk);
      await e.work();
    }
    assert.equal(e.eventsOf('signing_request.sent', r.json.document_id).length, 5, 'releases emit no new sent events');
    assert.equal(e.eventsOf('document.completed', r.json.document_id).length, 1);
  });

  test('one signer with anchors: fields at the markers, markers gone from the visible page', async () => {
    const pdf = await makePdf({ text: [['Lease agreement', 'Tenant: {{signature:tenant}}', 'Date: {{date:tenant}}']] });
    const p = signers(1).map((s) => ({ ...s, role: 'tenant' }));
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: p,
      file: { name: 'lease.pdf', content_base64: b64(pdf) },
      placement: 'anchors',
    });
    assert.equal(r.status, 201, r.text);
    await e.work();
    const tk = await e.linkFor(p[0]!.email);
    const info = await e.h.request('GET', `/sign/${tk}/info`);
    assert.deepEqual(info.json.fields.map((f: any) => f.type).sort(), ['date', 'signature']);
    assert.equal(info.json.fields[0].page, 1);
    await sign(e, tk);
    await e.work();
    assert.equal((await e.api('GET', `/v1/documents/${r.json.document_id}`)).json.status, 'completed');
  });

  test('callback_url: a document-scoped hook fires alongside the workspace hook, for its document only', async () => {
    const people = signers(1);
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: people,
      file: { name: 'a.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
      callback_url: e.rx.url('/cb'),
    });
    assert.equal(r.status, 201);
    assert.match(r.json.callback.hook_id, /^hook_/);
    assert.match(r.json.callback.secret, /^whsec_/);
    e.rx.secrets.set('/cb', r.json.callback.secret);
    const other = await e.api('POST', '/v1/signing-requests', {
      signers: signers(1),
      file: { name: 'b.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
    });
    await e.work();
    await sign(e, await e.linkFor(people[0]!.email));
    await e.work();
    const onCb = e.rx.events.filter((x) => x.path === '/cb').map((x) => x.event);
    assert.deepEqual(onCb.map((x) => x.event).sort(), [
      'document.completed',
      'signing_request.sent',
      'signing_request.signed',
      'signing_request.viewed',
    ]);
    assert.ok(
      onCb.every((x) => x.document_id === r.json.document_id),
      'onCb.every((x) => x.document_id === r.json.document_id)',
    );
    assert.ok(
      !onCb.some((x) => x.document_id === other.json.document_id),
      '!onCb.some((x) => x.document_id === other.json.document_id)',
    );
    assert.equal(e.eventsOf('document.completed', r.json.document_id).length, 1, 'the workspace hook got it too');
    const hooks = await e.api('GET', '/v1/hooks');
    assert.ok(!hooks.text.includes(r.json.callback.secret), 'never shown again');
  });
});
