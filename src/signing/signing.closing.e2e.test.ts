// Signing requests that close without completing, end to end over HTTP: declined, withdrawn, reminded, expired.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startE2E, type E2E } from '../testing/e2e.js';
import { plainPdf, signers } from './testing/requests.js';

describe('signing requests end to end', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(() => e.close());

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
});
