// webhooks.verify and webhooks.sign against the server's own signer (src/webhooks/signature.ts) and Stripe's verifier
// (an implementation nobody here wrote), plus every refusal with its teaching message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { deliveryHeaders } from '../../src/webhooks/signature.js';
import { EVENT_NAMES as SERVER_EVENT_NAMES } from '../../src/webhooks/events.js';
import { EVENT_NAMES, WebhookVerificationError, webhooks, type WebhookEvent } from '../src/index.js';

const secret = 'whsec_' + 'k'.repeat(43);
const t = 1_800_000_000;
const body = JSON.stringify({
  event: 'signing_request.sent',
  event_id: 'evt_' + 'a'.repeat(32),
  created_at: '2027-01-15T08:00:00.000Z',
  workspace_id: 'ws_1',
  signing_request_id: 'sr_1',
  document_id: 'doc_1',
  signer: { email: 'ana@example.com', role: 'buyer', name: 'Ana Pérez', slot: 1 },
  locale: 'de',
  source: 'v1_api',
});
const at = (seconds: number) => ({ now: seconds });

const refusal = (code: string, message: RegExp) => (err: unknown) => {
  assert.ok(err instanceof WebhookVerificationError, `a WebhookVerificationError, got ${String(err)}`);
  assert.equal(err.code, code);
  assert.match(err.message, message);
  return true;
};

test('sign() writes exactly the headers the server sends, and verify() returns the typed event', () => {
  const sdk = webhooks.sign(body, secret, { timestamp: t });
  const server = deliveryHeaders(secret, t, 'evt_' + 'a'.repeat(32), 'signing_request.sent', body);
  assert.deepEqual(sdk, server);

  const event: WebhookEvent = webhooks.verify(body, server, secret, at(t));
  assert.equal(event.event, 'signing_request.sent');
  if (event.event !== 'signing_request.sent') throw new Error('narrowing');
  assert.equal(event.signer.role, 'buyer');
  assert.equal(event.source, 'v1_api');
});

test("Stripe's verifier accepts sign()'s header", () => {
  const header = webhooks.sign(body, secret, { timestamp: new Date() })['x-service-signature']!;
  const event = new Stripe('sk_test_unused').webhooks.constructEvent(body, header, secret) as unknown as {
    event_id: string;
  };
  assert.equal(event.event_id, 'evt_' + 'a'.repeat(32));
});

test('verify() takes the body as string, Buffer, Uint8Array or ArrayBuffer and headers in any form and case', () => {
  const sig = webhooks.sign(body, secret, { timestamp: t })['x-service-signature']!;
  const bytes = Buffer.from(body, 'utf8');
  const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  for (const raw of [body, bytes, new Uint8Array(bytes), arrayBuffer]) {
    assert.equal(webhooks.verify(raw, { 'X-Service-Signature': sig }, secret, at(t)).event_id, 'evt_' + 'a'.repeat(32));
  }
  assert.ok(webhooks.verify(body, new Headers({ 'x-service-signature': sig }), secret, at(t)), 'Headers');
  assert.ok(webhooks.verify(body, { 'x-service-signature': [sig] }, secret, at(t)), 'array value');
  // Either family is enough: a proxy that drops one still verifies.
  assert.ok(webhooks.verify(body, { 'X-LEGACY-SIGNATURE': sig }, secret, at(t)), 'legacy family only');
});

test('refusals teach: raw body, no header, malformed header, mismatch, tolerance', () => {
  const headers = webhooks.sign(body, secret, { timestamp: t });
  assert.throws(
    () => webhooks.verify(JSON.parse(body), headers, secret, at(t)),
    refusal('parsed_body', /Pass the raw body, not parsed JSON/),
  );
  assert.throws(
    () => webhooks.verify(body, { 'content-type': 'application/json' }, secret, at(t)),
    refusal('no_signature_header', /No signature header/),
  );
  assert.throws(
    () => webhooks.verify(body, { 'x-service-signature': 'v1=abc' }, secret, at(t)),
    refusal('malformed_signature_header', /Malformed signature header/),
  );
  // One byte changed, re-serialised JSON (a different byte sequence), a wrong secret, a truncated signature.
  const sig = headers['x-service-signature']!;
  for (const [raw, key, header] of [
    [body.replace('Ana', 'Ann'), secret, sig],
    [JSON.stringify(JSON.parse(body), null, 2), secret, sig],
    [body, secret + 'x', sig],
    [body, secret, sig.slice(0, -1)],
  ] as const) {
    assert.throws(
      () => webhooks.verify(raw, { 'x-service-signature': header }, key, at(t)),
      refusal('signature_mismatch', /Signature mismatch/),
    );
  }
  // 300 s either way passes, 301 s does not; toleranceSeconds moves the bound.
  assert.ok(webhooks.verify(body, headers, secret, at(t + 300)), '+300 s');
  assert.ok(webhooks.verify(body, headers, secret, at(t - 300)), '-300 s');
  assert.throws(
    () => webhooks.verify(body, headers, secret, at(t + 301)),
    refusal('timestamp_outside_tolerance', /Timestamp outside tolerance/),
  );
  assert.throws(
    () => webhooks.verify(body, headers, secret, at(t - 301)),
    refusal('timestamp_outside_tolerance', /Timestamp outside tolerance/),
  );
  assert.throws(
    () => webhooks.verify(body, headers, secret, { now: t + 61, toleranceSeconds: 60 }),
    refusal('timestamp_outside_tolerance', /more than 60 s/),
  );
  // The default clock is the system's: a fresh signature passes, an hour-old one does not.
  assert.ok(webhooks.verify(body, webhooks.sign(body, secret), secret), 'now');
  assert.throws(
    () => webhooks.verify(body, webhooks.sign(body, secret, { timestamp: Date.now() / 1000 - 3600 }), secret),
    refusal('timestamp_outside_tolerance', /Timestamp outside tolerance/),
  );
});

test('a header with several v1 values verifies when one of them matches', () => {
  const sig = webhooks.signatureHeader(body, secret, { timestamp: t });
  const other = webhooks.signatureHeader(body, 'whsec_other', { timestamp: t }).split(',')[1];
  assert.ok(webhooks.verify(body, { 'x-service-signature': `${sig},${other}` }, secret, at(t)), 'match first');
  assert.ok(
    webhooks.verify(body, { 'x-service-signature': `t=${t},${other},${sig.split(',')[1]}` }, secret, at(t)),
    'match second',
  );
});

test("the SDK's event catalogue is the server's", () => {
  assert.deepEqual([...EVENT_NAMES].sort(), [...SERVER_EVENT_NAMES].sort());
});
