// The SDK against the real server: the app started in-process on a real port (startHarness), a real webhook
// receiver (testing/server.ts). Calls, webhooks and errors here; waits and retries in retries.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Signet, SignetError, WebhookVerificationError, type SigningRequestSentEvent } from '../src/index.js';
import { client, countDocuments, h, request, rx, useRealServer } from './testing/server.js';

describe('@signet/sdk against the real server', () => {
  useRealServer();

  test('a signing request with a PDF; its webhook arrives and verifies, and fails verification when tampered', async () => {
    const { signet } = await client();
    const created = await signet.signingRequests.create(request({ callback_url: rx.url('/contract-42') }));
    assert.match(created.document_id, /^doc_/);
    assert.equal(created.signing_requests[0]!.signer.role, 'buyer');
    const secret = created.callback!.secret;
    assert.match(secret, /^whsec_/);

    const doc = await signet.documents.get(created.document_id);
    assert.equal(doc.status, 'in_progress');
    const sr = await signet.signingRequests.get(created.signing_requests[0]!.id);
    assert.equal(sr.status, 'pending');

    await h.work();
    const d = rx.deliveries.find((x) => x.path === '/contract-42');
    assert.ok(d, 'the delivery arrived');
    const now = new Date(h.clock.now()); // the server's clock signed it
    const event = signet.webhooks.verify(d.raw, d.headers, secret, { now });
    assert.equal(event.event, 'signing_request.sent');
    if (event.event !== 'signing_request.sent') return;
    assert.equal(event.document_id, created.document_id);
    assert.equal(event.signer.email, 'ana@example.com');
    assert.equal(event.event_id, d.headers['x-service-event-id']);
    // The event type names exactly the fields the server sends.
    const declared: Record<keyof SigningRequestSentEvent, true> = {
      event: true,
      event_id: true,
      created_at: true,
      workspace_id: true,
      signing_request_id: true,
      document_id: true,
      signer: true,
      locale: true,
      source: true,
      test: true,
    };
    assert.deepEqual(
      Object.keys(event).sort(),
      Object.keys(declared)
        .filter((k) => k !== 'test')
        .sort(),
    );
    assert.deepEqual(Object.keys(event.signer).sort(), ['email', 'name', 'role', 'slot']);

    // The same delivery, with the body changed by one byte, five minutes and a second later, without its header.
    const changed = Buffer.from(d.raw.toString('utf8').replace('ana@', 'eve@'));
    const refused = (code: string) => (err: unknown) => err instanceof WebhookVerificationError && err.code === code;
    assert.throws(() => signet.webhooks.verify(changed, d.headers, secret, { now }), refused('signature_mismatch'));
    assert.throws(
      () => signet.webhooks.verify(d.raw, d.headers, secret, { now: new Date(h.clock.now() + 301_000) }),
      refused('timestamp_outside_tolerance'),
    );
    const withoutSignature = Object.fromEntries(Object.entries(d.headers).filter(([k]) => !k.endsWith('-signature')));
    assert.throws(
      () => signet.webhooks.verify(d.raw, withoutSignature, secret, { now }),
      refused('no_signature_header'),
    );
    assert.throws(
      () => signet.webhooks.verify(JSON.parse(d.raw.toString()), d.headers, secret, { now }),
      refused('parsed_body'),
    );
    // Another hook's secret does not verify it.
    const hook = await signet.hooks.create({ target_url: rx.url('/other') });
    assert.throws(() => signet.webhooks.verify(d.raw, d.headers, hook.secret, { now }), refused('signature_mismatch'));
  });

  test('the test event of a hook made with hooks.create verifies with its secret', async () => {
    const { signet } = await client();
    const hook = await signet.hooks.create({ target_url: rx.url('/connector'), events: ['signing_request.sent'] });
    const sent = await signet.hooks.test(hook.id);
    await h.work();
    const d = rx.deliveries.find((x) => x.headers['x-service-event-id'] === sent.event_id);
    assert.ok(d, 'the test delivery arrived');
    const event = signet.webhooks.verify(d.raw, new Headers(d.headers as Record<string, string>), hook.secret, {
      now: new Date(h.clock.now()),
    });
    assert.equal(event.event, 'signing_request.sent');
    assert.equal(event.event === 'signing_request.sent' && event.test, true);
    const history = await signet.hooks.deliveries(hook.id, { status: 'succeeded' });
    assert.equal(history[0]?.event_id, sent.event_id);
  });

  test('the same Idempotency-Key gives the same resource, created once', async () => {
    const { signet, workspaceId } = await client();
    const body = request();
    const a = await signet.signingRequests.create(body, { idempotencyKey: 'order-42' });
    const b = await signet.signingRequests.create(body, { idempotencyKey: 'order-42' });
    assert.equal(b.document_id, a.document_id);
    assert.deepEqual(b, a);
    assert.equal(await countDocuments(workspaceId), 1);
    // Without a key of its own each call gets a fresh one: a second document.
    const c = await signet.signingRequests.create(body);
    assert.notEqual(c.document_id, a.document_id);
    assert.equal(await countDocuments(workspaceId), 2);
    // Reusing the key with another body is the caller's bug, reported as such.
    await assert.rejects(
      signet.signingRequests.create(request({ title: 'Other' }), { idempotencyKey: 'order-42' }),
      (e: unknown) => e instanceof SignetError && e.status === 422 && e.code === 'idempotency_key_reused',
    );
  });

  test('a 4xx is a SignetError with status, code, message, meta and the RateLimit values', async () => {
    const { signet } = await client();
    const missing = await signet.documents.get('doc_missing').catch((e: unknown) => e);
    assert.ok(missing instanceof SignetError, `a SignetError, got ${String(missing)}`);
    assert.ok(missing instanceof Error, 'an Error');
    assert.equal(missing.name, 'SignetError');
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
    assert.equal(missing.message, 'Not found.');
    assert.equal(missing.request, 'GET /v1/documents/{id}');
    // The spec: only 2xx and 429 carry RateLimit headers.
    assert.equal(missing.limit, undefined);
    assert.equal(missing.remaining, undefined);

    const invalid = await signet.hooks.create({ target_url: 'ftp://example.com/hook' }).catch((e: unknown) => e);
    assert.ok(invalid instanceof SignetError, `a SignetError, got ${String(invalid)}`);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.code, 'invalid_request');
    assert.equal(invalid.meta?.field, 'target_url');
    assert.match(invalid.message, /target_url/);

    await assert.rejects(
      signet.signingRequests.create(request({ placement: 'manual' })),
      (e: unknown) => e instanceof SignetError && e.status === 400 && e.code === 'placement_retired',
    );

    const stranger = new Signet({ apiKey: 'svk_live_' + '0'.repeat(32), baseUrl: h.url('') });
    await assert.rejects(stranger.me(), (e: unknown) => e instanceof SignetError && e.code === 'invalid_key');
    const me = await signet.me();
    assert.equal(me.tier, 'business');
  });
});
