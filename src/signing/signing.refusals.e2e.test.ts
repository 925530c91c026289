// Refused signing requests end to end over HTTP: placement and file errors, the monthly cap, 404s, the dry run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { plainPdf, signers } from './testing/requests.js';

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
