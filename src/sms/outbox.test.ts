// The SMS outbox and its sender on SQLite and PostgreSQL: queueing in the caller's transaction, the log mode of the
// embedded default, the Twilio transport against a local HTTP peer (sent, retried on the webhook schedule, failed at
// once), concurrent senders, and `signet sms list|show` as operators run it. The message texts: messages.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { signetJson } from '../testing/child-server.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { getSms, listSms, type OutgoingSms } from './outbox.js';
import { createSmsSender, SMS_MAX_ATTEMPTS, SMS_RETRY_DELAYS_MS, type SmsSender } from './sender.js';
import { createTwilioTransport } from './transport.js';
import { EXPIRES, URL_ } from './testing/sms.js';

const TOKEN = 'tok-secret-twilio';

/** A pino logger writing JSON lines into memory. */
function memoryLogger() {
  const lines: Array<Record<string, any>> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines, text: () => lines.map((l) => JSON.stringify(l)).join('\n') };
}

/** A local peer answering as Twilio's Messages resource; `answer` decides per request (default: 201, fresh SID). */
type Seen = { url: string; authorization: string; form: Record<string, string> };
const seen: Seen[] = [];
let answer: (form: Record<string, string>) => { status: number; body: string } = () => ({ status: 201, body: '' });
let sid = 0;
const created = () => ({ status: 201, body: JSON.stringify({ sid: `SM${String(++sid).padStart(32, '0')}` }) });
let peer: http.Server;
let apiBase: string;

before(async () => {
  peer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      seen.push({ url: req.url!, authorization: req.headers.authorization ?? '', form });
      const a = answer(form);
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  apiBase = `http://127.0.0.1:${(peer.address() as { port: number }).port}`;
});
after(() => new Promise<void>((r) => peer.close(() => r())));

const twilio = () => createTwilioTransport({ accountSid: 'AC42', authToken: TOKEN, from: '+15550001111', apiBase });

function sms(workspaceId: string, over: Partial<OutgoingSms> & { token?: string } = {}): OutgoingSms {
  const { token, ...rest } = over;
  return {
    workspaceId,
    to: '+14155552671',
    locale: 'en',
    template: 'invitation',
    vars: {
      documentTitle: 'NDA',
      signerName: 'Ada Lovelace',
      url: token ? `https://signet.example.com/sign/${token}` : URL_,
      expiresAt: EXPIRES,
    },
    documentId: 'doc_1',
    signingRequestId: 'sr_1',
    ...rest,
  };
}

async function sendNow(db: Db, sender: SmsSender, msg: OutgoingSms) {
  const { id } = await sender.enqueue(db.kysely, msg);
  await sender.flush();
  return (await getSms(db, id))!;
}

type Backend = { db: Db; url: string; close(): Promise<void> };

function behaviours(name: string, open: () => Promise<Backend>, skip: string | false = false, cliDir?: () => string) {
  describe(name, { skip }, () => {
    let b: Backend;
    let db: Db;
    let ws: string;
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00.000Z'));

    before(async () => {
      b = await open();
      db = b.db;
      ws = (await createWorkspace(db.kysely, { name: 'Acme', tier: 'business' }, clock.now())).id;
    });
    after(async () => b?.close());

    test('enqueue writes in the caller transaction: a rollback leaves nothing, a commit is sent by flush', async () => {
      const sender = createSmsSender({ db, clock, transport: null });
      await assert.rejects(
        db.kysely.transaction().execute(async (trx) => {
          await sender.enqueue(trx, sms(ws, { documentId: 'doc_rollback' }));
          throw new Error('state change failed');
        }),
        /state change failed/,
      );
      assert.deepEqual(await listSms(db, { documentId: 'doc_rollback' }), []);
      const r = await db.kysely.transaction().execute((trx) => sender.enqueue(trx, sms(ws, { documentId: 'doc_ok' })));
      assert.equal(r.status, 'queued');
      assert.match(r.id, /^sms_[0-9a-f]{24}$/);
      assert.equal((await getSms(db, r.id))!.status, 'queued');
      assert.equal(await sender.flush(), 1);
      assert.equal(await sender.flush(), 0);
      await sender.close();
    });

    test('without a transport: logged, and the log line carries the number and the text with the link', async () => {
      const log = memoryLogger();
      const sender = createSmsSender({ db, clock, transport: null, logger: log.logger });
      assert.equal(sender.mode, 'log');
      const before = seen.length;
      const row = await sendNow(db, sender, sms(ws, { token: 'tok_dev_link', documentId: 'doc_log' }));
      assert.equal(row.status, 'logged');
      assert.equal(row.attempts, 0);
      assert.equal(row.sent_at, new Date(clock.now()).toISOString());
      assert.equal(
        row.body,
        'Acme asks you to sign "NDA": https://signet.example.com/sign/tok_dev_link (link expires 2026-12-01).',
      );
      const line = log.lines.find((l) => l.smsId === row.id)!;
      assert.equal(line.level, 30);
      assert.equal(line.msg, 'sms (no SMS_URL: logged, not sent)');
      assert.deepEqual(line.sms, { to: '+14155552671', body: row.body });
      assert.equal(seen.length, before, 'nothing went to the provider');
      await sender.close();
    });

    test('Twilio: sent with the provider id; the token is never logged nor stored', async () => {
      const log = memoryLogger();
      answer = created;
      const sender = createSmsSender({ db, clock, transport: twilio(), logger: log.logger });
      assert.equal(sender.mode, 'twilio');
      const row = await sendNow(db, sender, sms(ws, { to: '+491711234510', locale: 'de', documentId: 'doc_tw' }));
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 1);
      assert.match(row.provider_id ?? '', /^SM\d{32}$/);
      assert.equal(row.last_error, null);
      const s = seen.at(-1)!;
      assert.equal(s.url, '/2010-04-01/Accounts/AC42/Messages.json');
      assert.deepEqual(s.form, {
        To: '+491711234510',
        From: '+15550001111',
        Body: `Acme bittet Sie, "NDA" zu unterschreiben: ${URL_} (gültig bis 2026-12-01).`,
      });
      assert.ok(
        log.lines.some((l) => l.msg === 'sms sent' && l.smsId === row.id && l.providerId === row.provider_id),
        "log.lines.some((l) => l.msg === 'sms sent' && l.smsId === row.id && l.providerId === row.provider...",
      );
      assert.ok(!log.text().includes(TOKEN), '!log.text().includes(TOKEN)');
      assert.ok(!log.text().includes(URL_), 'with a transport no log line carries the text');
      await sender.close();
    });

    test('Twilio 503: queued with the error, retried on the schedule once the clock moves, then sent', async () => {
      const log = memoryLogger();
      answer = () => ({ status: 503, body: '{"code":20503,"message":"Service Unavailable"}' });
      const sender = createSmsSender({ db, clock, transport: twilio(), logger: log.logger });
      let row = await sendNow(db, sender, sms(ws, { documentId: 'doc_503' }));
      assert.equal(row.status, 'queued');
      assert.equal(row.attempts, 1);
      assert.match(row.last_error ?? '', /503/);
      assert.equal(row.next_attempt_at, new Date(clock.now() + SMS_RETRY_DELAYS_MS[0]).toISOString());
      assert.ok(
        log.lines.some((l) => l.level === 40 && l.msg === 'sms delivery failed, will retry'),
        "log.lines.some((l) => l.level === 40 && l.msg === 'sms delivery failed, will retry')",
      );

      answer = created;
      const sends = seen.length;
      clock.advance(SMS_RETRY_DELAYS_MS[0] - 1);
      assert.equal(await sender.flush(), 0, 'not due yet');
      assert.equal(seen.length, sends);
      clock.advance(1);
      assert.equal(await sender.flush(), 1);
      row = (await getSms(db, row.id))!;
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 2);
      assert.equal(row.last_error, null);
      assert.ok(row.provider_id, 'row.provider_id');
      assert.ok(!log.text().includes(TOKEN), '!log.text().includes(TOKEN)');
      await sender.close();
    });

    test('Twilio 503 for ever: failed after the 7th attempt', async () => {
      answer = () => ({ status: 503, body: '' });
      const sender = createSmsSender({ db, clock, transport: twilio() });
      const { id } = await sendNow(db, sender, sms(ws, { documentId: 'doc_giveup' }));
      for (const delay of SMS_RETRY_DELAYS_MS) {
        assert.equal((await getSms(db, id))!.status, 'queued');
        clock.advance(delay);
        await sender.flush();
      }
      const row = (await getSms(db, id))!;
      assert.equal(row.status, 'failed');
      assert.equal(row.attempts, SMS_MAX_ATTEMPTS);
      assert.equal(SMS_MAX_ATTEMPTS, 7);
      assert.equal(row.next_attempt_at, null);
      await sender.close();
    });

    test('Twilio 400: failed at once', async () => {
      const log = memoryLogger();
      answer = () => ({ status: 400, body: '{"code":21211,"message":"The To number is not valid."}' });
      const sender = createSmsSender({ db, clock, transport: twilio(), logger: log.logger });
      const sends = seen.length;
      const row = await sendNow(db, sender, sms(ws, { documentId: 'doc_400' }));
      assert.equal(row.status, 'failed');
      assert.equal(row.attempts, 1);
      assert.equal(row.next_attempt_at, null);
      assert.match(row.last_error ?? '', /400: The To number is not valid/);
      assert.equal(seen.length, sends + 1);
      assert.ok(
        log.lines.some((l) => l.level === 40 && l.msg === 'sms delivery giving up'),
        "log.lines.some((l) => l.level === 40 && l.msg === 'sms delivery giving up')",
      );
      clock.advance(SMS_RETRY_DELAYS_MS.at(-1)!);
      assert.equal(await sender.flush(), 0);
      assert.equal(seen.length, sends + 1);
      await sender.close();
    });

    test('two senders on two connections flushing at once send each message once', async () => {
      answer = created;
      const other = await openDb(b.url, { migrate: false });
      const senders = [db, other].map((d, i) =>
        createSmsSender({ db: d, clock, transport: twilio(), workerId: `w${i}`, batchSize: 3 }),
      );
      const ids = await db.kysely.transaction().execute(async (trx) => {
        const out: string[] = [];
        for (let i = 0; i < 30; i++)
          out.push((await senders[0]!.enqueue(trx, sms(ws, { token: `tok_race_${i}`, documentId: 'doc_race' }))).id);
        return out;
      });
      const sends = seen.length;
      const counts = await Promise.all(senders.map((s) => s.flush()));
      assert.equal(counts[0]! + counts[1]!, 30);
      const bodies = seen.slice(sends).map((s) => s.form.Body!);
      assert.equal(bodies.length, 30);
      assert.equal(new Set(bodies).size, 30);
      for (let i = 0; i < 30; i++) assert.equal(bodies.filter((x) => x.includes(`/sign/tok_race_${i} `)).length, 1);
      const rows = await listSms(db, { documentId: 'doc_race', limit: 100 });
      assert.deepEqual(rows.map((r) => r.id).sort(), [...ids].sort());
      assert.ok(
        rows.every((r) => r.status === 'sent' && r.attempts === 1 && r.provider_id),
        "rows.every((r) => r.status === 'sent' && r.attempts === 1 && r.provider_id)",
      );
      assert.equal(new Set(rows.map((r) => r.provider_id)).size, 30);
      await Promise.all(senders.map((s) => s.close()));
      await other.close();
    });

    test('a lapsed lease from a dead sender is taken over; a live one is not', async () => {
      answer = created;
      const sender = createSmsSender({ db, clock, transport: twilio(), leaseMs: 60_000 });
      const { id } = await sender.enqueue(db.kysely, sms(ws, { documentId: 'doc_lease' }));
      await db.kysely
        .updateTable('sms_outbox')
        .set({ claimed_by: 'dead', claim_expires_at: clock.now() + 60_000 })
        .where('id', '=', id)
        .execute();
      assert.equal(await sender.flush(), 0);
      clock.advance(60_000);
      assert.equal(await sender.flush(), 1);
      assert.equal((await getSms(db, id))!.status, 'sent');
      await sender.close();
    });

    test('the background loop sends what it is woken for, and close stops it', async () => {
      answer = created;
      const sender = createSmsSender({ db, clock, transport: twilio(), pollIntervalMs: 60_000 });
      sender.start();
      const sends = seen.length;
      const { id } = await sender.enqueue(db.kysely, sms(ws, { documentId: 'doc_loop' }));
      sender.wake();
      for (let i = 0; i < 300 && (await getSms(db, id))!.status === 'queued'; i++)
        await new Promise((r) => setTimeout(r, 10));
      assert.equal((await getSms(db, id))!.status, 'sent');
      assert.equal(seen.length, sends + 1);
      await sender.close();
      assert.equal(await sender.flush(), 0);
    });

    test('enqueue refuses a number that is not E.164, an unknown workspace, locale or template', async () => {
      const sender = createSmsSender({ db, clock, transport: null });
      for (const to of ['4155552671', '+1 415 555 2671', '+1415', ''])
        await assert.rejects(sender.enqueue(db.kysely, sms(ws, { to })), /E\.164/);
      await assert.rejects(sender.enqueue(db.kysely, sms('ws_nope')), /no workspace/);
      await assert.rejects(sender.enqueue(db.kysely, sms(ws, { locale: 'de-DE' as never })), /unknown locale/);
      await assert.rejects(sender.enqueue(db.kysely, sms(ws, { template: 'completed' as never })), /unknown SMS/);
      await assert.rejects(
        sender.enqueue(db.kysely, sms(ws, { vars: { ...sms(ws).vars, url: 'javascript:alert(1)' } })),
        /http/,
      );
      assert.deepEqual(await listSms(db, { status: 'queued' }), []);
      await sender.close();
    });

    test('listSms: newest first, by status, without bodies', async () => {
      const all = await listSms(db, { limit: 500 });
      assert.ok(all.length > 30, 'all.length > 30');
      for (const v of all) {
        assert.deepEqual(Object.keys(v).sort(), [
          'attempts',
          'created_at',
          'document_id',
          'id',
          'last_error',
          'provider_id',
          'sent_at',
          'signing_request_id',
          'status',
          'template',
          'to',
        ]);
      }
      const failed = await listSms(db, { status: 'failed' });
      assert.deepEqual(failed.map((r) => r.document_id).sort(), ['doc_400', 'doc_giveup']);
      assert.equal((await listSms(db, { status: 'logged' })).length, 2);
    });

    if (cliDir)
      test('signet sms list [--status] --json and sms show --json', async () => {
        const all = await signetJson(cliDir(), ['sms', 'list', '--limit', '500']);
        assert.deepEqual(all.sms, JSON.parse(JSON.stringify(await listSms(db, { limit: 500 }))));
        assert.ok(
          all.sms.every((r: Record<string, unknown>) => !('body' in r)),
          "all.sms.every((r: Record<string, unknown>) => !('body' in r))",
        );
        const logged = await signetJson(cliDir(), ['sms', 'list', '--status', 'logged']);
        assert.equal(logged.sms.length, 2);
        assert.ok(
          logged.sms.every((r: { status: string }) => r.status === 'logged'),
          "logged.sms.every((r: { status: string }) => r.status === 'logged')",
        );
        const one = await signetJson(cliDir(), ['sms', 'show', logged.sms[0].id]);
        assert.equal(one.sms.id, logged.sms[0].id);
        assert.match(one.sms.body, /^Acme asks you to sign "NDA": https:\/\/signet\.example\.com\/sign\//);
        await assert.rejects(signetJson(cliDir(), ['sms', 'list', '--status', 'bogus']), /--status must be one of/);
      });
  });
}

let dir: string;
behaviours(
  'SMS outbox on SQLite',
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sms-'));
    const url = `sqlite:${path.join(dir, 'signet.db')}`;
    const db = await openDb(url);
    return { db, url, close: async () => (await db.close(), fs.rmSync(dir, { recursive: true, force: true })) };
  },
  false,
  () => dir,
);

const pg = await postgresForTests();
behaviours(
  'SMS outbox on PostgreSQL',
  async () => {
    const fresh = await freshPostgres((pg as { url: string }).url);
    return { db: fresh.db, url: fresh.url, close: () => fresh.drop() };
  },
  'skip' in pg ? pg.skip : false,
);
