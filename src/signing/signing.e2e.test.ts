// Signing requests end to end, through HTTP only: invitations arrive at a real SMTP peer, links come from the
// e-mails, signers act through the signer endpoints, events arrive at a real receiver (verified by Stripe's code).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { makePdf, makePng } from '../documents/pdf/testing/fixtures.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { verifyChain } from '../documents/audit.repo.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const has = (cmd: string) => !spawnSync(cmd, ['-v']).error;

const signers = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: `signer${i + 1}`,
    email: `s${i + 1}.${Math.random().toString(36).slice(2, 8)}@example.com`,
    name: `Signer ${i + 1}`,
  }));

async function plainPdf(pages = 2) {
  return b64(await makePdf({ pages, text: [['Master services agreement'], ['Page two']] }));
}

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
        const sig = spawnSync('pdfsig', [tmp.save(bytes, 'signed.pdf')], { encoding: 'utf8' });
        assert.equal(sig.error, undefined, 'pdfsig runs');
        assert.match(sig.stdout, /Signature Validation: Signature is Valid/);
        assert.match(sig.stdout, /Total document signed/);
        tmp.qpdfCheck(bytes);
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

  test('decline: the document is declined, the other request closes, nobody can sign any more', async () => {
    const people = signers(2);
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: people,
      file: { name: 'a.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
    });
    await e.work();
    const [t1, t2] = [await e.linkFor(people[0]!.email), await e.linkFor(people[1]!.email)];
    const empty = await e.h.request('POST', `/sign/${t1}/decline`, { body: { reason: '   ' } });
    assert.equal(empty.status, 400);
    const d = await e.h.request('POST', `/sign/${t1}/decline`, { body: { reason: 'Wrong amount on page 2' } });
    assert.equal(d.status, 200, d.text);
    await e.work();
    const ev = e.eventsOf('signing_request.declined', r.json.document_id);
    assert.equal(ev.length, 1);
    assert.deepEqual(
      { id: ev[0]!.signing_request_id, doc: ev[0]!.document_id, signer: ev[0]!.signer, reason: ev[0]!.reason },
      {
        id: r.json.signing_requests[0].id,
        doc: r.json.document_id,
        signer: { email: people[0]!.email, name: people[0]!.name },
        reason: 'Wrong amount on page 2',
      },
    );
    const doc = await e.api('GET', `/v1/documents/${r.json.document_id}`);
    assert.equal(doc.json.status, 'declined');
    assert.deepEqual(
      doc.json.signing_requests.map((x: any) => x.status),
      ['declined', 'withdrawn'],
    );
    assert.equal(doc.json.signing_requests[0].decline_reason, 'Wrong amount on page 2');
    for (const tk of [t1, t2]) {
      const s = await e.h.request('POST', `/sign/${tk}/sign`, { body: { signature: { type: 'typed', text: 'x' } } });
      assert.equal(s.status, 409);
      assert.equal(s.json.code, 'request_not_signable');
    }
    assert.equal((await e.h.request('POST', `/sign/${t1}/decline`, { body: { reason: 'again' } })).status, 409);
    await e.work();
    assert.equal(e.eventsOf('signing_request.declined', r.json.document_id).length, 1, 'never a second event');
    assert.equal(e.eventsOf('document.completed', r.json.document_id).length, 0);
  });

  test('withdraw a request or a document: it never completes; reminders re-send the invitation', async () => {
    const people = signers(2);
    const a = await e.api('POST', '/v1/signing-requests', {
      signers: people,
      file: { name: 'a.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
    });
    await e.work();
    const remind = await e.api('POST', `/v1/signing-requests/${a.json.signing_requests[0].id}/remind`);
    assert.equal(remind.status, 202);
    await e.work();
    const links = await e.linksFor(people[0]!.email);
    assert.equal(links.length, 2, 'the reminder carries a fresh link');
    assert.equal((await e.h.request('POST', `/sign/${links[0]}/view`)).status, 404, 'the old link stops working');
    const w = await e.api('POST', `/v1/signing-requests/${a.json.signing_requests[0].id}/withdraw`);
    assert.equal(w.status, 200);
    assert.equal(w.json.status, 'withdrawn');
    const doc = await e.api('GET', `/v1/documents/${a.json.document_id}`);
    assert.equal(doc.json.status, 'withdrawn');
    const t2 = await e.linkFor(people[1]!.email);
    assert.equal(
      (await e.h.request('POST', `/sign/${t2}/sign`, { body: { signature: { type: 'typed', text: 'x' } } })).status,
      409,
    );
    assert.equal((await e.api('POST', `/v1/signing-requests/${a.json.signing_requests[1].id}/remind`)).status, 409);

    const b = await e.api('POST', '/v1/signing-requests', {
      signers: signers(1),
      file: { name: 'b.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
    });
    const wd = await e.api('POST', `/v1/documents/${b.json.document_id}/withdraw`);
    assert.equal(wd.status, 200);
    assert.equal(wd.json.status, 'withdrawn');
    assert.equal(wd.json.signing_requests[0].status, 'withdrawn');
    assert.equal((await e.api('POST', `/v1/documents/${b.json.document_id}/withdraw`)).status, 409);
  });

  test('expiry: each pending or viewed request expires once with expired_at = expires_at; queued followers silently', async () => {
    const start = e.h.clock.now();
    const expiresAt = new Date(start + 2 * 3600_000).toISOString();
    const par = signers(2);
    const seq = signers(3);
    const a = await e.api('POST', '/v1/signing-requests', {
      signers: par,
      file: { name: 'a.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
      expires_at: expiresAt,
    });
    const b = await e.api('POST', '/v1/signing-requests', {
      signers: seq,
      file: { name: 'b.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
      expires_at: expiresAt,
      signing_order: 'sequential',
    });
    assert.equal(a.status, 201);
    await e.work();
    await e.h.request('POST', `/sign/${await e.linkFor(par[0]!.email)}/view`);
    e.h.clock.set(Date.parse(expiresAt) - 1);
    await e.h.runtime.runJob('expire-requests');
    await e.work();
    assert.equal(e.eventsOf('signing_request.expired', a.json.document_id).length, 0, 'not before its expiry');
    e.h.clock.set(start + 3 * 3600_000);
    const [r1, r2] = await Promise.all([e.h.runtime.runJob('expire-requests'), e.h.runtime.runJob('expire-requests')]);
    assert.equal(
      Number(r1.expired) + Number(r2.expired),
      3,
      'two parallel + the first sequential, once across two runners',
    );
    await e.work();
    const evA = e.eventsOf('signing_request.expired', a.json.document_id);
    assert.equal(evA.length, 2);
    for (const ev of evA) {
      assert.equal(ev.expired_at, expiresAt);
      assert.deepEqual(Object.keys(ev).sort(), [
        'created_at',
        'document_id',
        'event',
        'event_id',
        'expired_at',
        'signer',
        'signing_request_id',
        'workspace_id',
      ]);
    }
    assert.equal(e.eventsOf('signing_request.expired', b.json.document_id).length, 1);
    const docB = await e.api('GET', `/v1/documents/${b.json.document_id}`);
    assert.equal(docB.json.status, 'expired');
    assert.deepEqual(
      docB.json.signing_requests.map((x: any) => x.status),
      ['expired', 'expired', 'expired'],
    );
    assert.equal((await e.api('GET', `/v1/documents/${a.json.document_id}`)).json.status, 'expired');
    await e.h.runtime.runJob('expire-requests');
    await e.work();
    assert.equal(e.eventsOf('signing_request.expired', a.json.document_id).length, 2, 'never twice');
    const page = await e.h.request('GET', `/sign/${await e.linkFor(par[1]!.email)}`);
    assert.match(page.text, /data-state="expired"/);
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

describe('signing requests: refusals create nothing', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ env: { SIGNET_TIER_CAPS: 'starter=2' } });
  });
  after(() => e.close());

  const countDocs = async () =>
    Number(
      (
        await e.h.db.kysely
          .selectFrom('documents')
          .select((x) => x.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('placement and file errors, each with its code and meta', async () => {
    const before = await countDocs();
    const file = (pdf: Uint8Array) => ({ name: 'x.pdf', content_base64: b64(pdf) });
    const two = [
      { role: 'buyer', email: 'b@example.com', name: 'B' },
      { role: 'seller', email: 's@example.com', name: 'S' },
    ];
    const cases: Array<[string, Record<string, unknown>, number, string, Record<string, unknown>?]> = [
      ['manual', { signers: two, file: file(await makePdf()), placement: 'manual' }, 400, 'placement_retired'],
      ['manual with junk', { placement: 'manual', signers: 'nope' }, 400, 'placement_retired'],
      [
        'no marker for seller',
        { signers: two, file: file(await makePdf({ text: [['{{signature:buyer}}']] })), placement: 'anchors' },
        400,
        'signer_has_no_anchor',
        { role: 'seller' },
      ],
      [
        'duplicate',
        {
          signers: two,
          file: file(await makePdf({ text: [['{{signature:buyer}}', '{{signature:buyer}}', '{{signature:seller}}']] })),
          placement: 'anchors',
        },
        400,
        'duplicate_anchor',
      ],
      ['no text', { signers: two, file: file(await makePdf()), placement: 'anchors' }, 400, 'no_anchors_found'],
      [
        'unknown role',
        {
          signers: two,
          file: file(
            await makePdf({ text: [['{{signature:buyer}}', '{{signature:seller}}', '{{signature:notary}}']] }),
          ),
          placement: 'anchors',
        },
        400,
        'unknown_role',
        { role: 'notary' },
      ],
      [
        'coordinates off page',
        {
          signers: two.slice(0, 1),
          file: file(await makePdf()),
          placement: 'coordinates',
          fields: [{ role: 'buyer', type: 'signature', page: 1, x: 600, y: 10, width: 100, height: 40 }],
        },
        400,
        'invalid_request',
      ],
      [
        'coordinates page 9',
        {
          signers: two.slice(0, 1),
          file: file(await makePdf()),
          placement: 'coordinates',
          fields: [{ role: 'buyer', type: 'signature', page: 9, x: 10, y: 10, width: 100, height: 40 }],
        },
        400,
        'invalid_request',
      ],
      [
        'coordinates unknown role',
        {
          signers: two.slice(0, 1),
          file: file(await makePdf()),
          placement: 'coordinates',
          fields: [
            { role: 'buyer', type: 'signature', page: 1, x: 10, y: 10, width: 100, height: 40 },
            { role: 'ghost', type: 'signature', page: 1, x: 10, y: 100, width: 100, height: 40 },
          ],
        },
        400,
        'unknown_role',
      ],
      [
        'garbage file',
        {
          signers: two,
          file: { name: 'x.pdf', content_base64: b64(Buffer.from('hello, not a pdf')) },
          placement: 'auto_append',
        },
        400,
        'invalid_file',
      ],
      [
        'zero bytes',
        { signers: two, file: { name: 'x.pdf', content_base64: '' }, placement: 'auto_append' },
        400,
        'invalid_file',
      ],
      [
        'encrypted',
        { signers: two, file: file(await makePdf({ encrypt: true })), placement: 'auto_append' },
        400,
        'invalid_file',
      ],
      [
        'bad base64',
        { signers: two, file: { name: 'x.pdf', content_base64: '%%%%' }, placement: 'auto_append' },
        400,
        'invalid_request',
      ],
      [
        'both file and file_url',
        { signers: two, file: file(await makePdf()), file_url: 'https://x.example/a.pdf', placement: 'auto_append' },
        400,
        'invalid_request',
      ],
      [
        'duplicate roles',
        { signers: [two[0], { ...two[1], role: 'buyer' }], file: file(await makePdf()), placement: 'auto_append' },
        400,
        'invalid_request',
      ],
      [
        'bad email',
        { signers: [{ ...two[0], email: 'not-an-email' }], file: file(await makePdf()), placement: 'auto_append' },
        400,
        'invalid_request',
      ],
      [
        '21 signers',
        {
          signers: Array.from({ length: 21 }, (_, i) => ({ role: `r${i}`, email: `r${i}@example.com`, name: 'R' })),
          file: file(await makePdf()),
          placement: 'auto_append',
        },
        400,
        'invalid_request',
      ],
      [
        'unknown locale',
        { signers: two, file: file(await makePdf()), placement: 'auto_append', locale: 'xx' },
        400,
        'invalid_request',
      ],
      [
        'past expiry',
        { signers: two, file: file(await makePdf()), placement: 'auto_append', expires_at: '2020-01-01T00:00:00Z' },
        400,
        'invalid_request',
      ],
      [
        'expiry over 365 days',
        {
          signers: two,
          file: file(await makePdf()),
          placement: 'auto_append',
          expires_at: new Date(e.h.clock.now() + 366 * 86400_000).toISOString(),
        },
        400,
        'invalid_request',
      ],
      [
        'file_url to a closed port',
        { signers: two, file_url: 'http://127.0.0.1:9/a.pdf', placement: 'auto_append' },
        400,
        'file_url_unreachable',
      ],
    ];
    for (const [name, body, status, code, meta] of cases) {
      const r = await e.api('POST', '/v1/signing-requests', body);
      assert.equal(r.status, status, `${name}: ${r.text}`);
      assert.equal(r.json.code, code, `${name}: ${r.text}`);
      if (meta) for (const [k, v] of Object.entries(meta)) assert.equal(r.json.meta?.[k], v, `${name}: meta.${k}`);
    }
    assert.equal(await countDocs(), before, 'nothing half-created');
    assert.equal(e.rx.events.length, 0, 'no event for a refused request');
  });

  test('monthly document cap per tier: 402 tier_required with meta.tier, cap, used', async () => {
    const t = await e.h.tenant('starter');
    const body = {
      signers: signers(1),
      file: { name: 'a.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
    };
    for (let i = 0; i < 2; i++)
      assert.equal((await e.h.request('POST', '/v1/signing-requests', { token: t.token, body })).status, 201);
    const r = await e.h.request('POST', '/v1/signing-requests', { token: t.token, body });
    assert.equal(r.status, 402);
    assert.equal(r.json.code, 'tier_required');
    assert.deepEqual(r.json.meta, { tier: 'starter', cap: 2, used: 2 });
    // A new calendar month starts a new count.
    const now = new Date(e.h.clock.now());
    e.h.clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1));
    assert.equal((await e.h.request('POST', '/v1/signing-requests', { token: t.token, body })).status, 201);
  });

  test("another workspace's documents and requests are 404", async () => {
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: signers(1),
      file: { name: 'a.pdf', content_base64: await plainPdf(1) },
      placement: 'auto_append',
    });
    const other = await e.h.tenant('business');
    for (const [m, p] of [
      ['GET', `/v1/documents/${r.json.document_id}`],
      ['GET', `/v1/documents/${r.json.document_id}/signed`],
      ['GET', `/v1/documents/${r.json.document_id}/audit-trail`],
      ['POST', `/v1/documents/${r.json.document_id}/withdraw`],
      ['GET', `/v1/signing-requests/${r.json.signing_requests[0].id}`],
      ['POST', `/v1/signing-requests/${r.json.signing_requests[0].id}/remind`],
      ['POST', `/v1/signing-requests/${r.json.signing_requests[0].id}/withdraw`],
    ] as const) {
      const x = await e.h.request(m, p, { token: other.token });
      assert.equal(x.status, 404, `${m} ${p}`);
      assert.equal(x.json.code, 'not_found');
    }
    const mine = await e.api('GET', `/v1/signing-requests/${r.json.signing_requests[0].id}`);
    assert.equal(mine.status, 200);
    assert.equal(mine.json.document_id, r.json.document_id);
    assert.ok(!mine.text.includes('/sign/'), "!mine.text.includes('/sign/')");
  });

  test('POST /v1/placement/preview reports anchors and every problem without creating anything', async () => {
    const before = await countDocs();
    const pdf = await makePdf({ text: [['{{signature:buyer}}', '{{signature:buyer}}', '{{initials:notary}}']] });
    const r = await e.api('POST', '/v1/placement/preview', {
      file: { name: 'p.pdf', content_base64: b64(pdf) },
      roles: ['buyer', 'seller'],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.page_count, 1);
    assert.equal(r.json.anchors.length, 3);
    assert.ok(
      r.json.anchors.every((a: any) => a.page === 1 && a.box && a.box.width > 0),
      'r.json.anchors.every((a: any) => a.page === 1 && a.box && a.box.width > 0)',
    );
    const codes = r.json.problems.map((p: any) => p.code).sort();
    assert.deepEqual(codes, ['duplicate_anchor', 'signer_has_no_anchor', 'unknown_role']);
    assert.equal(await countDocs(), before);
  });
});
