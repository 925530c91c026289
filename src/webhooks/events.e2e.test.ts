// Every event kind the service sends, made to happen through the real app (HTTP, signer links from the e-mails, the
// clock-driven jobs), with every body checked against its event's schema with no field more or less: the receiver
// (testing/e2e.ts) refuses a body that does not fit; this test checks each one again, against the OpenAPI document's
// schema too, and that each kind came.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Schema from 'typebox/schema';
import { eventComponentName } from '../docs/webhooks.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { eventBodyProblems, strictSchema } from '../testing/schemas.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { EVENT_NAMES, type EventName } from './events.js';

const DAY = 24 * 3600_000;
const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;

let e: E2E;
before(async () => {
  e = await startE2E({ tier: 'enterprise' });
});
after(() => e.close());

async function signingRequest(extra: Record<string, unknown> = {}) {
  const people = [
    { role: 'buyer', email: email('buyer'), name: 'Ana Pérez' },
    { role: 'seller', email: email('seller'), name: 'Li Lei' },
  ];
  const file = { name: 'contract.pdf', content_base64: b64(await makePdf({ pages: 1 })) };
  const r = await e.api('POST', '/v1/signing-requests', { signers: people, file, placement: 'auto_append', ...extra });
  assert.equal(r.status, 201, r.text);
  await e.work();
  return { docId: r.json.document_id as string, people };
}

async function act(token: string, action: 'sign' | 'decline') {
  assert.equal((await e.h.request('POST', `/sign/${token}/view`)).status, 200);
  const body = action === 'sign' ? { signature: { type: 'typed', text: 'Me' } } : { reason: 'Wrong amount' };
  const r = await e.h.request('POST', `/sign/${token}/${action}`, { body });
  assert.equal(r.status, 200, r.text);
}

async function instance(tplId: string, review: boolean) {
  const r = await e.api('POST', `/v1/templates/${tplId}/instantiate`, {
    recipients: [
      { slot: 'client', name: 'Ada Lovelace', email: email('client') },
      { slot: 'provider', name: 'Grace Hopper', channel: 'sms', phone: '+14155550123' },
    ],
    field_values: VALUES,
    review,
  });
  assert.equal(r.status, 201, r.text);
  return r.json.template_instance as { id: string; document_id: string };
}

test('every event kind arrives, and every body fits its schema exactly', async () => {
  // Signing: viewed, signed, completed; declined; expired by the clock.
  const done = await signingRequest();
  for (const p of done.people) await act(await e.linkFor(p.email), 'sign');
  await e.work();
  const declined = await signingRequest();
  await act(await e.linkFor(declined.people[0]!.email), 'decline');
  const expiresAt = e.h.clock.now() + 2 * 3600_000;
  const expiring = await signingRequest({ expires_at: new Date(expiresAt).toISOString() });

  // Templates: sent at once (confirmed by the API), staged then confirmed on the review page, discarded by hand,
  // generated (completed without signers), and one left to expire.
  const created = await e.api('POST', '/v1/templates', await templateBody());
  assert.equal(created.status, 201, created.text);
  const tplId: string = created.json.id;
  await instance(tplId, false);
  await e.work();
  const staged = await instance(tplId, true);
  await e.work();
  const reviewUrl: string = e.eventsOf('template_instance.staged', staged.document_id)[0]!.review_url;
  const confirmed = await e.h.request('POST', `${new URL(reviewUrl).pathname}/confirm`, {
    headers: { accept: 'application/json' },
  });
  assert.equal(confirmed.status, 200, confirmed.text);
  const discarded = await instance(tplId, true);
  assert.equal((await e.api('POST', `/v1/template-instances/${discarded.id}/discard`)).status, 200);
  const generated = await e.api('POST', `/v1/templates/${tplId}/generate`, { field_values: VALUES });
  assert.equal(generated.status, 201, generated.text);
  const left = await instance(tplId, true);

  // The hook test event, to the workspace hook.
  const hooks = await e.api('GET', '/v1/hooks');
  const hook = (hooks.json as { id: string; target_url: string }[]).find((x) => x.target_url === e.rx.url('/ws'))!;
  assert.equal((await e.api('POST', `/v1/hooks/${hook.id}/test`)).status, 202);
  await e.work();

  // The clock-driven jobs: the request past its expires_at, then the review window of the instance left staged.
  e.h.clock.set(expiresAt + 3600_000);
  await e.h.runtime.runJob('expire-requests');
  e.h.clock.advance(15 * DAY);
  await e.h.runtime.runJob('expire-reviews');
  await e.work();

  const bodies = e.rx.events.filter((x) => x.path === '/ws');
  assert.deepEqual(e.rx.misfits, []);
  // Each fits its schema here, and the one the OpenAPI document publishes (which the SDK's types come from).
  const doc = (await e.h.request('GET', '/v1/openapi.json')).json;
  const published = (name: EventName) =>
    strictSchema(doc.components.schemas[eventComponentName(name)], doc.components.schemas);
  for (const b of bodies) {
    assert.deepEqual(eventBodyProblems(b.body), [], b.body);
    assert.ok(Schema.Check(published(b.event.event), b.event), `the document's schema: ${b.body}`);
  }
  const kinds = new Set(bodies.map((b) => b.event.event as string));
  // placement_expired is retired: nothing sends it.
  assert.deepEqual(
    EVENT_NAMES.filter((n) => !kinds.has(n)),
    ['placement_expired'],
  );

  // The variants the schemas allow for were all among them.
  const sent = e.eventsOf('signing_request.sent');
  assert.deepEqual([...new Set(sent.map((x) => `${x.source}${x.test ? ' test' : ''}`))].sort(), [
    'template_instance',
    'v1_api',
    'v1_api test',
  ]);
  const completed = e.eventsOf('document.completed');
  assert.ok(
    completed.some((x) => x.document_id === done.docId && x.signer !== null),
    'a signed document completed',
  );
  assert.ok(
    completed.some((x) => x.document_id === generated.json.template_instance.document_id && x.signer === null),
    'a generated file completed without a signer',
  );
  assert.deepEqual([...new Set(e.eventsOf('template_instance.confirmed').map((x) => x.actor))].sort(), [
    'api',
    'review_page',
  ]);
  assert.deepEqual(
    ['generate', 'instantiate'],
    [...new Set(e.eventsOf('template_instance.confirmed').map((x) => x.kind))].sort(),
  );
  assert.equal(e.eventsOf('template_instance.discarded', discarded.document_id)[0]?.reason, 'discarded');
  assert.equal(e.eventsOf('template_instance.discarded', left.document_id)[0]?.reason, 'expired');
  assert.equal(e.eventsOf('signing_request.declined', declined.docId).length, 1);
  assert.equal(e.eventsOf('signing_request.expired', expiring.docId).length, 2);
  assert.ok(
    e.eventsOf('template_instance.staged').some((x) => x.recipients.some((r: { email: unknown }) => r.email === null)),
    'an SMS-only recipient (email null) is in a body',
  );
});
