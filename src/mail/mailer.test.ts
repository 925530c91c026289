import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AddressObject } from 'mailparser';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { KNOWN_LOCALES, type Locale } from '../i18n/i18n.js';
import type { Logger } from '../lib/logger.js';
import { createMailer, MAIL_MAX_ATTEMPTS, MAIL_RETRY_DELAYS_MS } from './mailer.js';
import { getMail, listOutbox } from './outbox.js';
import type { OutgoingMail } from './outbox.js';
import { sendNow } from './testing/send-now.js';
import { startSmtpPeer, type SmtpPeer } from './testing/smtp-peer.js';
import { freePort } from '../testing/child-server.js';

const BASE = 'http://localhost:3000';
const FROM = 'Signet <no-reply@signet.test>';
const EXPIRES = Date.parse('2026-12-06T10:00:00Z');

type Entry = { level: string; obj: Record<string, unknown>; msg?: string };
function captureLogger(): Logger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: string) => (obj: object, msg?: string) =>
    void entries.push({ level, obj: obj as Record<string, unknown>, msg });
  return { entries, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A port nothing listens on (bound once, then released). */

const addr = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a[0] : a)?.value[0];

let dir: string;
let db: Db;
let clock: ManualClock;
let peer: SmtpPeer;
let acme: { id: string };
let plain: { id: string };

function invitation(
  workspaceId: string,
  over: Partial<OutgoingMail> & { token?: string; name?: string; locale?: Locale } = {},
): OutgoingMail {
  const token = over.token ?? `tok_${Math.random().toString(36).slice(2)}`;
  return {
    workspaceId,
    to: { email: 'ada@example.com', name: over.name ?? 'Ada Lovelace' },
    locale: over.locale ?? 'en',
    template: 'invitation',
    vars: {
      signerName: over.name ?? 'Ada Lovelace',
      documentTitle: 'NDA 2026',
      baseUrl: BASE,
      token,
      expiresAt: EXPIRES,
    },
    documentId: 'doc_1',
    signingRequestId: 'sr_1',
    ...over,
  } as OutgoingMail;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-mail-'));
  db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  clock = new ManualClock(Date.parse('2026-11-22T10:00:00.000Z'));
  peer = await startSmtpPeer({ reject: (rcpt) => rcpt.startsWith('bounce@') });
  acme = await createWorkspace(
    db.kysely,
    { name: 'Zoë & "Co" <Acme>', tier: 'business', replyTo: 'legal@acme.example' },
    clock.now(),
  );
  plain = await createWorkspace(db.kysely, { name: 'Plain Ltd', tier: 'starter' }, clock.now());
});

after(async () => {
  await peer.close();
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('mailer over SMTP', () => {
  test('invitation in each locale: language, link in both parts, Reply-To, From display name, UTF-8', async () => {
    const logger = captureLogger();
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM, logger });
    const first = peer.received.length;
    const names: Record<Locale, string> = {
      en: 'Zoë Ångström',
      de: 'Łukasz Żółć',
      fr: '李雷',
      es: 'Ελένη Παπαδοπούλου',
      it: 'Niccolò Ferrè',
      nl: 'Ĳsbrand van ’t Hoff',
      pt: 'João Gonçalves',
      pl: 'Zofia Wójcik',
      sv: 'Åsa Öberg',
      ja: '山田 太郎',
      ar: 'ليلى الحسن',
    };
    const subjects: Record<Locale, RegExp> = {
      en: /^Zoë & "Co" <Acme> asks you to sign “NDA 2026”$/,
      de: /bittet Sie, „NDA 2026“ zu unterschreiben$/,
      fr: /vous invite à signer «\u00a0NDA 2026\u00a0»$/,
      es: /le solicita que firme «NDA 2026»$/,
      it: /Le chiede di firmare «NDA 2026»$/,
      nl: /vraagt u “NDA 2026” te ondertekenen$/,
      pt: /solicita sua assinatura em “NDA 2026”$/,
      pl: /prosi o podpisanie dokumentu „NDA 2026”$/,
      sv: /ber dig signera ”NDA 2026”$/,
      ja: /から「NDA 2026」への署名依頼が届いています$/,
      ar: /^تطلب منك .+ توقيع «NDA 2026»$/,
    };
    const tokens: Record<string, string> = {};
    for (const locale of KNOWN_LOCALES) {
      tokens[locale] = `tok_${locale}_Xy-9_secret`;
      const r = await sendNow(
        db,
        mailer,
        invitation(acme.id, {
          locale,
          name: names[locale],
          token: tokens[locale],
          to: { email: `${locale}@example.com`, name: names[locale] },
        }),
      );
      assert.equal(r.status, 'sent');
    }
    await mailer.close();
    const parsed = (await peer.parsed()).slice(first);
    assert.equal(parsed.length, KNOWN_LOCALES.length);
    for (const [i, locale] of KNOWN_LOCALES.entries()) {
      const m = parsed[i]!;
      const link = `${BASE}/sign/${tokens[locale]}`;
      assert.match(m.subject ?? '', subjects[locale]);
      assert.ok(m.text?.includes(link), `${locale}: link in text`);
      assert.ok(typeof m.html === 'string' && m.html.includes(`href="${link}"`), `${locale}: link in html`);
      assert.equal(addr(m.replyTo)?.address, 'legal@acme.example');
      assert.equal(addr(m.from)?.address, 'no-reply@signet.test');
      assert.equal(addr(m.from)?.name, 'Zoë & "Co" <Acme> via Signet');
      assert.equal(addr(m.to)?.name, names[locale]);
      assert.equal(addr(m.to)?.address, `${locale}@example.com`);
      assert.ok(m.text?.includes(names[locale]), `${locale}: name in body`);
      assert.ok((m.html as string).includes(names[locale]), '(m.html as string).includes(names[locale])');
      assert.equal(m.headers.get('content-language'), locale);
      assert.match(m.messageId ?? '', /^<mail_[0-9a-f]{24}@signet\.test>$/);
    }
    assert.match(parsed[1]!.text!, /Diese Anfrage läuft am 6\. Dezember 2026 um 10:00 UTC ab\./);
    // With SMTP configured, no log line carries a body or a signer link.
    for (const e of logger.entries) {
      const line = JSON.stringify(e);
      for (const tok of Object.values(tokens)) assert.ok(!line.includes(tok), `token leaked: ${line}`);
      assert.ok(!('text' in e.obj) && !('links' in e.obj), "!('text' in e.obj) && !('links' in e.obj)");
    }
    const rows = await listOutbox(db, { documentId: 'doc_1', to: 'DE@example.com' });
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.status, 'sent');
    assert.equal(rows[0]!.attempts, 1);
    assert.equal(rows[0]!.reply_to, 'legal@acme.example');
    assert.ok(rows[0]!.sent_at, 'rows[0]!.sent_at');
  });

  test('hostile names are escaped in HTML and intact in headers and text', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM });
    const first = peer.received.length;
    const hostile = '<script>alert("x")</script> Zoë & "Co"';
    await sendNow(db, mailer, invitation(acme.id, { name: hostile, to: { email: 'h@example.com', name: hostile } }));
    await mailer.close();
    const [m] = (await peer.parsed()).slice(first);
    const html = m!.html as string;
    assert.ok(!html.includes('<script'), "!html.includes('<script')");
    assert.ok(
      html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Zoë &amp; &quot;Co&quot;'),
      "html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Zoë &amp; &quot;Co&quot;')",
    );
    assert.ok(
      html.includes('Zoë &amp; &quot;Co&quot; &lt;Acme&gt;'),
      "html.includes('Zoë &amp; &quot;Co&quot; &lt;Acme&gt;')",
    );
    assert.ok(m!.text!.includes(`Hello ${hostile},`), 'm!.text!.includes(`Hello ${hostile},`)');
    assert.equal(addr(m!.to)?.name, hostile);
    assert.equal(addr(m!.to)?.address, 'h@example.com');
  });

  test('Reply-To: none without a workspace reply-to; an explicit value overrides; null removes it', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM });
    const first = peer.received.length;
    await sendNow(db, mailer, invitation(plain.id));
    await sendNow(db, mailer, invitation(plain.id, { replyTo: 'owner@plain.example' }));
    await sendNow(db, mailer, invitation(acme.id, { replyTo: null }));
    await mailer.close();
    const [a, b, c] = (await peer.parsed()).slice(first);
    assert.equal(a!.replyTo, undefined);
    assert.equal(addr(a!.from)?.name, 'Plain Ltd via Signet');
    assert.equal(addr(b!.replyTo)?.address, 'owner@plain.example');
    assert.equal(c!.replyTo, undefined);
  });

  test('a rolled-back transaction leaves no mail; a committed one is sent by flush', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM });
    const first = peer.received.length;
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await mailer.enqueue(trx, invitation(plain.id, { documentId: 'doc_rollback' }));
        throw new Error('state change failed');
      }),
      /state change failed/,
    );
    assert.equal((await listOutbox(db, { documentId: 'doc_rollback' })).length, 0);
    const { id, status } = await db.kysely
      .transaction()
      .execute((trx) => mailer.enqueue(trx, invitation(plain.id, { documentId: 'doc_commit' })));
    assert.equal(status, 'queued');
    assert.equal(peer.received.length, first, 'nothing is sent by enqueue');
    assert.equal(await mailer.flush(), 1);
    assert.equal(await mailer.flush(), 0);
    assert.equal(peer.received.length, first + 1);
    assert.equal((await getMail(db, id))?.status, 'sent');
    await mailer.close();
  });

  test('peer down: the row stays queued with last_error and is sent after backoff once the peer is up', async () => {
    const port = await freePort();
    const logger = captureLogger();
    const mailer = createMailer({ db, clock, smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM, logger });
    const r = await sendNow(db, mailer, invitation(plain.id, { documentId: 'doc_down' }));
    assert.equal(r.status, 'queued');
    let row = (await getMail(db, r.id))!;
    assert.equal(row.attempts, 1);
    assert.match(row.last_error ?? '', /ECONNREFUSED|ECONNECTION/);
    assert.equal(row.next_attempt_at, new Date(clock.now() + MAIL_RETRY_DELAYS_MS[0]).toISOString());
    assert.ok(
      logger.entries.some((e) => e.level === 'warn' && e.msg === 'mail delivery failed, will retry'),
      "logger.entries.some((e) => e.level === 'warn' && e.msg === 'mail delivery failed, will retry')",
    );

    const late = await startSmtpPeer({ port });
    try {
      assert.equal(await mailer.flush(), 0, 'not due yet');
      assert.equal(late.received.length, 0);
      clock.advance(MAIL_RETRY_DELAYS_MS[0]);
      assert.equal(await mailer.flush(), 1);
      row = (await getMail(db, r.id))!;
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 2);
      assert.equal(row.last_error, null);
      assert.equal(late.received.length, 1);
      assert.deepEqual(late.received[0]!.to, ['ada@example.com']);
    } finally {
      await mailer.close();
      await late.close();
    }
  });

  test('gives up as failed after the last retry', async () => {
    const port = await freePort();
    const mailer = createMailer({ db, clock, smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM });
    const { id } = await sendNow(db, mailer, invitation(plain.id, { documentId: 'doc_giveup' }));
    for (const delay of MAIL_RETRY_DELAYS_MS) {
      assert.equal((await getMail(db, id))!.status, 'queued');
      clock.advance(delay);
      await mailer.flush();
    }
    const row = (await getMail(db, id))!;
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, MAIL_MAX_ATTEMPTS);
    assert.equal(row.next_attempt_at, null);
    await mailer.close();
  });

  test('a permanent rejection (550) fails at once', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM });
    const r = await sendNow(db, mailer, invitation(plain.id, { to: { email: 'bounce@example.com', name: 'B' } }));
    assert.equal(r.status, 'failed');
    const row = (await getMail(db, r.id))!;
    assert.equal(row.attempts, 1);
    assert.match(row.last_error ?? '', /550/);
    await mailer.close();
  });

  test('two flushers on two connections deliver each message exactly once', async () => {
    const other = await openDb(`sqlite:${path.join(dir, 'signet.db')}`, { migrate: false });
    const a = createMailer({ db, clock, smtpUrl: peer.url, from: FROM, workerId: 'A', batchSize: 3 });
    const b = createMailer({ db: other, clock, smtpUrl: peer.url, from: FROM, workerId: 'B', batchSize: 3 });
    const first = peer.received.length;
    const ids = await db.kysely.transaction().execute(async (trx) => {
      const out: string[] = [];
      for (let i = 0; i < 30; i++) {
        out.push(
          (
            await a.enqueue(
              trx,
              invitation(plain.id, { documentId: 'doc_race', to: { email: `r${i}@example.com`, name: `R ${i}` } }),
            )
          ).id,
        );
      }
      return out;
    });
    const [na, nb] = await Promise.all([a.flush(), b.flush()]);
    assert.equal(na + nb, 30);
    const got = (await peer.parsed()).slice(first).map((m) => m.messageId);
    assert.equal(got.length, 30);
    assert.deepEqual([...new Set(got)].sort(), ids.map((id) => `<${id}@signet.test>`).sort());
    const rows = await listOutbox(db, { documentId: 'doc_race', limit: 100 });
    assert.ok(
      rows.every((r) => r.status === 'sent' && r.attempts === 1),
      "rows.every((r) => r.status === 'sent' && r.attempts === 1)",
    );
    await Promise.all([a.close(), b.close()]);
    await other.close();
  });

  test('a lapsed lease from a dead worker is taken over; a live one is not', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM, leaseMs: 120_000 });
    const { id } = await mailer.enqueue(db.kysely, invitation(plain.id, { documentId: 'doc_lease' }));
    await db.kysely
      .updateTable('mail_outbox')
      .set({ claimed_by: 'dead', claim_expires_at: clock.now() + 120_000 })
      .where('id', '=', id)
      .execute();
    assert.equal(await mailer.flush(), 0);
    clock.advance(120_000);
    assert.equal(await mailer.flush(), 1);
    assert.equal((await getMail(db, id))!.status, 'sent');
    await mailer.close();
  });

  test('the background loop sends what is woken for, and close stops it', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM, pollIntervalMs: 60_000 });
    const first = peer.received.length;
    mailer.start();
    await mailer.enqueue(db.kysely, invitation(plain.id, { documentId: 'doc_loop' }));
    mailer.wake();
    for (let i = 0; i < 200 && peer.received.length === first; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(peer.received.length, first + 1);
    await mailer.close();
    assert.equal(await mailer.flush(), 0);
  });
});

describe('mailer without SMTP (embedded default)', () => {
  test('rows become logged and the log line carries the text and the signer link', async () => {
    const logger = captureLogger();
    const mailer = createMailer({ db, clock, smtpUrl: null, from: FROM, logger });
    assert.equal(mailer.mode, 'log');
    const first = peer.received.length;
    const r = await sendNow(
      db,
      mailer,
      invitation(acme.id, { token: 'tok_dev_link', documentId: 'doc_log', locale: 'es' }),
    );
    assert.equal(r.status, 'logged');
    const row = (await getMail(db, r.id))!;
    assert.equal(row.status, 'logged');
    assert.ok(row.sent_at, 'row.sent_at');
    const e = logger.entries.find((x) => x.obj.mailId === r.id)!;
    assert.equal(e.level, 'info');
    assert.equal(e.obj.to, 'ada@example.com');
    assert.match(String(e.obj.subject), /le solicita que firme/);
    assert.ok(
      String(e.obj.text).includes(`${BASE}/sign/tok_dev_link`),
      'String(e.obj.text).includes(`${BASE}/sign/tok_dev_link`)',
    );
    assert.deepEqual(e.obj.links, [`${BASE}/sign/tok_dev_link`]);
    assert.equal(peer.received.length, first);
    await mailer.close();
  });
});

describe('mailer input checks', () => {
  test('refuses unknown locales, templates, workspaces and malformed addresses', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: null, from: FROM });
    await assert.rejects(sendNow(db, mailer, invitation(plain.id, { locale: 'de-DE' as Locale })), /unknown locale/);
    await assert.rejects(
      sendNow(db, mailer, { ...invitation(plain.id), template: 'nope' } as never),
      /unknown mail template/,
    );
    await assert.rejects(sendNow(db, mailer, invitation('ws_missing')), /no workspace/);
    await assert.rejects(
      sendNow(db, mailer, invitation(plain.id, { to: { email: 'a@b.example\r\nBcc: x@evil.example', name: 'x' } })),
      /not a plain e-mail/,
    );
    await assert.rejects(sendNow(db, mailer, invitation(plain.id, { replyTo: 'Evil <e@x.example>' })), /reply-to/);
    assert.throws(() => createMailer({ db, clock, smtpUrl: null, from: 'nobody' }), /mail from/);
    assert.throws(() => createMailer({ db, clock, smtpUrl: 'http://x', from: FROM }), /smtp/);
    assert.throws(() => createMailer({ db, clock, smtpUrl: null, from: FROM, leaseMs: 1000 }), /leaseMs/);
    await mailer.close();
  });
});
