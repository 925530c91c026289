// The signer's copy end to end, on SQLite and PostgreSQL, through HTTP only: the real app on a real port, mail at a
// real SMTP peer, links taken from the e-mails. Each signer's completion mail carries their own download link; its
// PDF is the sealed file byte for byte; the link works for 30 days and not after; the audit trail records it sent,
// never the token; the signer page offers the sealed file after completion only; declined, withdrawn and expired
// documents send none.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { sql } from 'kysely';
import type { ParsedMail } from 'mailparser';
import { sha256Hex } from '../lib/crypto.js';
import { SIGNER_COPY_VALIDITY_MS } from '../limits.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { plainPdf, signers } from './testing/requests.js';

const databases = await bothDatabases();
const COPY = /\/copy\/([A-Za-z0-9_-]{43})/;
const DAY = 86_400_000;
const has = (cmd: string) => !spawnSync(cmd, ['-v']).error;

const addressedTo = (m: ParsedMail, email: string) =>
  (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === email));

/** Bytes over the real port (the harness client reads text). */
async function get(e: E2E, path: string, headers: Record<string, string> = {}) {
  const r = await fetch(e.h.url(path), { headers });
  return { status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) };
}

async function sign(e: E2E, token: string) {
  assert.equal((await e.h.request('POST', `/sign/${token}/view`)).status, 200);
  const s = await e.h.request('POST', `/sign/${token}/sign`, {
    body: { signature: { type: 'typed', text: 'Signed' } },
  });
  assert.equal(s.status, 200, s.text);
}

async function create(e: E2E, people: ReturnType<typeof signers>) {
  const r = await e.api('POST', '/v1/signing-requests', {
    signers: people,
    file: { name: 'msa.pdf', content_base64: await plainPdf(1) },
    placement: 'auto_append',
  });
  assert.equal(r.status, 201, r.text);
  await e.work();
  return { documentId: r.json.document_id as string, requestIds: r.json.signing_requests.map((x: any) => x.id) };
}

for (const d of databases) {
  describe(`the signer's copy (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database });
    });
    after(() => e.close());

    /** Every completion mail to `email` with its copy token (the text part's link; the HTML's must match). */
    async function copyMails(email: string) {
      return (await e.smtp.parsed())
        .filter((m) => addressedTo(m, email) && /^Completed:/.test(m.subject ?? ''))
        .map((m) => {
          const token = COPY.exec(m.text ?? '')?.[1];
          if (token) assert.ok(String(m.html).includes(`href="${e.h.config.baseUrl}/copy/${token}"`), 'HTML link');
          return { mail: m, token };
        });
    }

    async function completed(n = 2) {
      const people = signers(n);
      const doc = await create(e, people);
      const tokens = await Promise.all(people.map((p) => e.linkFor(p.email)));
      for (const tk of tokens) await sign(e, tk);
      await e.work();
      const got = await e.api('GET', `/v1/documents/${doc.documentId}`);
      assert.equal(got.json.status, 'completed');
      return { ...doc, people, tokens, completedAt: Date.parse(got.json.completed_at) };
    }

    test('each signer gets their own link; its PDF is the sealed file; the trail shows it sent', async () => {
      const people = signers(2);
      const { documentId, requestIds } = await create(e, people);
      const [t1, t2] = [await e.linkFor(people[0]!.email), await e.linkFor(people[1]!.email)];
      const prepared = await get(e, `/sign/${t1}/document.pdf`);
      assert.equal(prepared.status, 200);

      await sign(e, t1);
      await e.work();
      // Before completion nothing changes: the unsealed file, no download offer, no copy mail.
      assert.deepEqual((await get(e, `/sign/${t1}/document.pdf`)).body, prepared.body);
      const waiting = await e.h.request('GET', `/sign/${t1}`);
      assert.match(waiting.text, /data-state="signed"/);
      assert.ok(!waiting.text.includes('document.pdf'), 'no download before completion');
      assert.deepEqual(await copyMails(people[0]!.email), []);

      await sign(e, t2);
      await e.work();
      const sealed = await get(e, `/v1/documents/${documentId}/signed`, { authorization: `Bearer ${e.token}` });
      assert.equal(sealed.status, 200);
      assert.notDeepEqual(sealed.body, prepared.body);
      const doc = (await e.api('GET', `/v1/documents/${documentId}`)).json;
      assert.equal(sha256Hex(sealed.body), doc.signed_sha256);

      const copies = await Promise.all(people.map(async (p) => copyMails(p.email)));
      const tokens = copies.map((c) => {
        assert.equal(c.length, 1, 'one completion mail each');
        assert.ok(c[0]!.token, 'it carries a copy link');
        return c[0]!.token!;
      });
      assert.notEqual(tokens[0], tokens[1], 'a link per signer');
      assert.ok(!tokens.includes(t1) && !tokens.includes(t2), 'not the signing links');
      const mail = copies[0]![0]!.mail;
      assert.match(mail.text ?? '', /valid for 30 days/);
      assert.ok(!/contact/.test(mail.text ?? ''), 'no "contact the workspace for a copy" any more');

      for (const tk of tokens) {
        const pdf = await get(e, `/copy/${tk}/document.pdf`);
        assert.equal(pdf.status, 200);
        assert.equal(pdf.headers.get('content-type'), 'application/pdf');
        assert.match(
          pdf.headers.get('content-disposition') ?? '',
          /^attachment; filename="doc_[0-9a-f]+-signed\.pdf"; filename\*=UTF-8''.+-signed\.pdf$/,
        );
        assert.ok(pdf.body.equals(sealed.body), 'the sealed PDF byte for byte');
        const page = await e.h.request('GET', `/copy/${tk}`, { headers: { 'accept-language': 'de-DE,de;q=0.9' } });
        assert.equal(page.status, 200);
        assert.match(page.text, /<html lang="de">/);
        assert.ok(page.text.includes(`href="/copy/${tk}/document.pdf"`), 'the sealed PDF is linked');
        assert.ok(page.text.includes(`href="/copy/${tk}/audit-trail.pdf"`), 'the certificate is linked');
        assert.ok(!/<script/i.test(page.text), 'no script: plain links');
        assert.match(page.headers['content-security-policy'] ?? '', /script-src 'none'/);
        assert.equal(page.headers['referrer-policy'], 'no-referrer');
        assert.equal(page.headers['cache-control'], 'no-store');
        assert.equal(page.headers['x-frame-options'], 'DENY');
      }

      // The certificate is the one the API serves.
      const cert = await get(e, `/copy/${tokens[0]}/audit-trail.pdf`);
      assert.equal(cert.status, 200);
      assert.equal(cert.headers.get('content-type'), 'application/pdf');
      const apiCert = await get(e, `/v1/documents/${documentId}/audit-trail`, {
        authorization: `Bearer ${e.token}`,
        accept: 'application/pdf',
      });
      if (has('pdftotext')) {
        const tmp = await pdfScratch('signet-copy-');
        try {
          const text = (b: Buffer) => tmp.pdfText(b).replace(/\s+/g, ' ');
          const ours = text(cert.body);
          assert.equal(ours, text(apiCert.body));
          assert.match(ours, /signer_copy\.sent/);
        } finally {
          await tmp.cleanup();
        }
      } else assert.ok(cert.body.subarray(0, 5).equals(Buffer.from('%PDF-')), 'a PDF');

      // The signer page now offers and serves the sealed file.
      const page = await e.h.request('GET', `/sign/${t1}`);
      assert.match(page.text, /data-state="signed"/);
      assert.ok(page.text.includes(`href="/sign/${t1}/document.pdf"`), 'a plain download link');
      assert.ok((await get(e, `/sign/${t1}/document.pdf`)).body.equals(sealed.body), 'the sealed bytes');

      // The audit trail: one entry per link, after document.completed; never a token.
      const trail = await e.api('GET', `/v1/documents/${documentId}/audit-trail`);
      assert.equal(trail.json.chain_valid, true);
      const sent = trail.json.entries.filter((x: any) => x.action === 'signer_copy.sent');
      assert.deepEqual(
        sent.map((x: any) => [x.signing_request_id, x.actor, x.detail]),
        requestIds.map((id: string) => [
          id,
          'system',
          { signing_request_id: id, expires_at: new Date(Date.parse(doc.completed_at) + 30 * DAY).toISOString() },
        ]),
      );
      assert.equal(trail.json.entries.at(-3).action, 'document.completed');
      const rows = await e.h.db.kysely
        .selectFrom('signer_copies')
        .selectAll()
        .where('document_id', '=', documentId)
        .execute();
      assert.deepEqual(rows.map((r) => r.token_hash).sort(), tokens.map((t) => sha256Hex(t)).sort(), 'hashes at rest');
      for (const tk of tokens) {
        assert.ok(!trail.text.includes(tk), 'the trail never holds a token');
        assert.ok(!JSON.stringify(rows).includes(tk), 'the table never holds a token');
      }
    });

    test('the link works for 29 days and up to its last millisecond, not at 30 days', async () => {
      const c = await completed(1);
      const [{ token }] = await copyMails(c.people[0]!.email);
      assert.ok(token, 'a copy link');
      const expiresAt = c.completedAt + SIGNER_COPY_VALIDITY_MS;
      assert.equal(SIGNER_COPY_VALIDITY_MS, 30 * DAY);
      const start = e.h.clock.now();
      try {
        for (const at of [c.completedAt + 29 * DAY, expiresAt - 1]) {
          e.h.clock.set(at);
          assert.equal((await e.h.request('GET', `/copy/${token}`)).status, 200);
          assert.equal((await get(e, `/copy/${token}/document.pdf`)).status, 200);
          assert.equal((await get(e, `/copy/${token}/audit-trail.pdf`)).status, 200);
        }
        e.h.clock.set(expiresAt);
        const page = await e.h.request('GET', `/copy/${token}`);
        assert.equal(page.status, 404);
        assert.match(page.text, /data-state="expired"/);
        assert.match(page.text, /This download link has expired\./);
        assert.match(page.text, /Test Workspace/, 'says whom to ask');
        for (const file of ['document.pdf', 'audit-trail.pdf']) {
          const json = await e.h.request('GET', `/copy/${token}/${file}`);
          assert.equal(json.status, 404);
          assert.equal(json.json.code, 'not_found');
          const html = await e.h.request('GET', `/copy/${token}/${file}`, { headers: { accept: 'text/html' } });
          assert.equal(html.status, 404);
          assert.match(html.text, /data-state="expired"/);
        }
      } finally {
        e.h.clock.set(start);
      }
    });

    test('declined, withdrawn and expired documents send no copy', async () => {
      const declined = await create(e, signers(2));
      const withdrawn = await create(e, signers(2));
      const expiring = await create(e, signers(1));
      const people = await Promise.all(
        [declined, withdrawn, expiring].map(async (x) => (await e.api('GET', `/v1/documents/${x.documentId}`)).json),
      );
      const emails = people.flatMap((p) => p.signing_requests.map((r: any) => r.signer.email as string));
      // One signer of each signs first, so a completion would have been one signature away.
      await sign(e, await e.linkFor(emails[1]!));
      const dl = await e.h.request('POST', `/sign/${await e.linkFor(emails[0]!)}/decline`, { body: { reason: 'No' } });
      assert.equal(dl.status, 200);
      await sign(e, await e.linkFor(emails[2]!));
      assert.equal((await e.api('POST', `/v1/documents/${withdrawn.documentId}/withdraw`)).status, 200);
      const start = e.h.clock.now();
      try {
        e.h.clock.set(start + 31 * DAY);
        await e.h.runtime.runJob('expire-requests');
        await e.work();
      } finally {
        e.h.clock.set(start);
      }
      const statuses = await Promise.all(
        [declined, withdrawn, expiring].map(
          async (x) => (await e.api('GET', `/v1/documents/${x.documentId}`)).json.status,
        ),
      );
      assert.deepEqual(statuses, ['declined', 'withdrawn', 'expired']);
      for (const x of [declined, withdrawn, expiring]) {
        const trail = await e.api('GET', `/v1/documents/${x.documentId}/audit-trail`);
        assert.ok(!trail.json.entries.some((en: any) => en.action === 'signer_copy.sent'), 'no copy in the trail');
        const rows = await e.h.db.kysely
          .selectFrom('signer_copies')
          .select('id')
          .where('document_id', '=', x.documentId)
          .execute();
        assert.deepEqual(rows, []);
      }
      const mails = (await e.smtp.parsed()).filter((m) => emails.some((em) => addressedTo(m, em)));
      assert.ok(mails.length >= emails.length, 'they were mailed (invitations, notices)');
      assert.ok(!mails.some((m) => COPY.test(m.text ?? '') || /^Completed:/.test(m.subject ?? '')), 'no copy mail');
    });

    test('an unknown or malformed link: the "not valid" page to a browser, the catalogue 404 to others', async () => {
      for (const tk of ['A'.repeat(43), 'short', '%00']) {
        const page = await e.h.request('GET', `/copy/${tk}`, {
          headers: { accept: 'text/html', 'accept-language': 'fr' },
        });
        assert.equal(page.status, 404, tk);
        assert.match(page.text, /data-state="not_found"/);
        assert.match(page.text, /<html lang="fr">/);
        assert.match(page.text, /Ce lien de téléchargement n’est pas valide\./);
        const pdf = await e.h.request('GET', `/copy/${tk}/document.pdf`);
        assert.equal(pdf.status, 404);
        assert.equal(pdf.json.code, 'not_found');
      }
      // A signing link is not a copy link.
      const c = await completed(1);
      assert.equal((await e.h.request('GET', `/copy/${c.tokens[0]}`)).status, 404);
    });
  });
}

describe("the signer's copy is limited per address like the signer page", () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ env: { PUBLIC_RATE_LIMIT: '3' } });
  });
  after(() => e.close());

  test('past the limit: 429 with Retry-After, a page to a browser', async () => {
    const url = `/copy/${'B'.repeat(43)}`;
    for (let i = 0; i < 3; i++) assert.equal((await e.h.request('GET', url)).status, 404);
    const refused = await e.h.request('GET', url, { headers: { accept: 'text/html' } });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
    assert.match(refused.text, /data-state="rate_limited"/);
    assert.equal((await e.h.request('GET', `${url}/document.pdf`)).json.code, 'rate_limited');
  });
});

describe('on a schema without migration 010 (a rolling upgrade)', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(() => e.close());

  test('documents still complete, and the completion mail goes out without a link', async () => {
    await e.h.db.kysely.schema.dropTable('signer_copies').execute();
    await sql`delete from kysely_migration where name = ${'010-signer-copies'}`.execute(e.h.db.kysely);
    const people = signers(1);
    const { documentId } = await create(e, people);
    await sign(e, await e.linkFor(people[0]!.email));
    await e.work();
    assert.equal((await e.api('GET', `/v1/documents/${documentId}`)).json.status, 'completed');
    const mail = (await e.smtp.parsed()).find(
      (m) => addressedTo(m, people[0]!.email) && /^Completed:/.test(m.subject ?? ''),
    );
    assert.ok(mail, 'the completion mail was sent');
    assert.ok(!COPY.test(mail.text ?? ''), 'without a copy link');
    assert.match(mail.text ?? '', /please contact Test Workspace/);
  });
});
