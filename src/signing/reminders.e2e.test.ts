// Automatic reminders and the expiry warning on SQLite and PostgreSQL, with two workers on one database: the clock
// moves in 6-hour steps over a request's 20 days, and at every step both workers run both jobs at once (directly,
// past the scheduler's slot claim, so only the per-signer guarded claim stands between them and a duplicate). With
// reminders {after_days: 2, every_days: 3}: one reminder per period to each signer who has not acted, counted from
// their invitation or release, at most 5; none to signers who signed, declined or were withdrawn, none while
// queued; one expiry warning 48 hours before expiry; every mail arrives once at the SMTP peer, with a working link.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { MAX_AUTO_REMINDERS } from '../limits.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';

const databases = await bothDatabases();
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const PDF = b64(await makePdf({ text: [['Agreement']] }));

for (const d of databases) {
  describe(`automatic reminders and expiry warnings (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let worker2: Runtime;
    before(async () => {
      e = await startE2E({ database: d.database });
      // A second worker process's graph on the same database and clock.
      worker2 = await createRuntime(e.h.config, {
        api: false,
        worker: true,
        clock: e.h.clock,
        db: e.h.db,
        logger: false,
        keyring: null, // as the harness's own runtime: hook secrets plain
      });
    });
    after(async () => {
      await worker2?.close();
      await e?.close();
    });

    const tag = Math.random().toString(36).slice(2, 8);
    const addr = (who: string) => `${who}.${tag}@example.com`;
    async function send(signers: string[], o: Record<string, unknown> = {}) {
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: signers.map((who, i) => ({ role: `r${i + 1}`, email: addr(who), name: who })),
        file: { name: 'a.pdf', content_base64: PDF },
        placement: 'auto_append',
        ...o,
      });
      assert.equal(r.status, 201, r.text);
      return r.json;
    }
    async function act(who: string, what: 'view' | 'sign' | 'decline') {
      await e.work();
      const token = await e.linkFor(addr(who));
      const body =
        what === 'sign' ? { signature: { type: 'typed', text: who } } : what === 'decline' ? { reason: 'No.' } : {};
      const r = await e.h.request('POST', `/sign/${token}/${what}`, { body });
      assert.equal(r.status, 200, `${who} ${what}: ${r.text}`);
    }
    /** Outbox rows of `template` per recipient (written in the claiming transaction). */
    async function outbox(template: string): Promise<Record<string, number>> {
      const rows = await e.h.db.kysely
        .selectFrom('mail_outbox')
        .select(['to_email'])
        .where('template', '=', template)
        .where('to_email', 'like', `%.${tag}@example.com`)
        .execute();
      const out: Record<string, number> = {};
      for (const r of rows) {
        const who = r.to_email.split('.')[0]!;
        out[who] = (out[who] ?? 0) + 1;
      }
      return out;
    }
    /** Both workers run both jobs at once; returns what they report sending. */
    async function bothWorkersRun() {
      const rs = await Promise.all([
        e.h.runtime.runJob('send-reminders'),
        worker2.runJob('send-reminders'),
        e.h.runtime.runJob('warn-expiring'),
        worker2.runJob('warn-expiring'),
      ]);
      return { sent: Number(rs[0].sent) + Number(rs[1].sent), warned: Number(rs[2].warned) + Number(rs[3].warned) };
    }

    test('20 days on two workers: the right signers, one reminder per period, the cap, one warning', async () => {
      const start = e.h.clock.now();
      const expires_at = new Date(start + 20 * DAY).toISOString();
      const reminders = { after_days: 2, every_days: 3 };
      const parallel = await send(['ann', 'bob', 'vic'], { reminders, expires_at });
      assert.deepEqual(parallel.reminders, reminders);
      await send(['dee', 'dan'], { reminders, expires_at });
      await send(['quin', 'quade'], { reminders, expires_at, signing_order: 'sequential' });
      await send(['none'], { reminders: null, expires_at });
      await act('bob', 'sign');
      await act('vic', 'view'); // viewed but not signed: still reminded
      await act('dee', 'decline'); // dan is withdrawn with the document

      const reported = { sent: 0, warned: 0 };
      const seen: Record<number, Record<string, number>> = {};
      for (let step = 1; step < 20 * 4; step++) {
        e.h.clock.advance(6 * HOUR);
        const r = await bothWorkersRun();
        reported.sent += r.sent;
        reported.warned += r.warned;
        seen[step / 4] = await outbox('reminder');
        if (step === 16) await act('quin', 'sign'); // day 4: quade's turn comes
      }
      // Period by period (days since creation): ann and vic at 2, 5, 8, 11, 14 (then the cap); quin at 2 (then he
      // signed); quade from his release on day 4: 6, 9, 12, 15 (18 falls in the warning window).
      assert.deepEqual(seen[1.75], {}, 'nothing before after_days');
      assert.deepEqual(seen[2], { ann: 1, vic: 1, quin: 1 });
      assert.deepEqual(seen[4.75], { ann: 1, vic: 1, quin: 1 });
      assert.deepEqual(seen[5], { ann: 2, vic: 2, quin: 1 });
      assert.deepEqual(seen[6], { ann: 2, vic: 2, quin: 1, quade: 1 });
      assert.deepEqual(seen[14], { ann: 5, vic: 5, quin: 1, quade: 3 });
      assert.deepEqual(seen[15], { ann: 5, vic: 5, quin: 1, quade: 4 });
      assert.deepEqual(seen[19.75], { ann: MAX_AUTO_REMINDERS, vic: MAX_AUTO_REMINDERS, quin: 1, quade: 4 });

      const warnings = await outbox('expiry_warning');
      // The warning does not depend on reminders: `none` (reminders: null) is warned too.
      assert.deepEqual(warnings, { ann: 1, vic: 1, quade: 1, none: 1 });
      assert.equal(reported.sent, 15, 'the workers together report each reminder once');
      assert.equal(reported.warned, 4, 'and each warning once');
      const warnedAt = await e.h.db.kysely
        .selectFrom('signing_requests')
        .select(['email', 'expiry_warned_at', 'expires_at'])
        .where('expiry_warned_at', 'is not', null)
        .where('email', 'like', `%.${tag}@example.com`)
        .execute();
      assert.equal(warnedAt.length, 4);
      for (const w of warnedAt) {
        const before = Number(w.expires_at) - Number(w.expiry_warned_at);
        assert.ok(before <= 48 * HOUR && before > 42 * HOUR, `${w.email} warned ${before / HOUR} h before expiry`);
      }

      const audit = await e.h.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'actor', 'detail'])
        .where('action', 'in', ['signing_request.reminded', 'signing_request.expiry_warned'])
        .execute();
      assert.equal(audit.filter((a) => a.action === 'signing_request.reminded').length, 15);
      assert.equal(audit.filter((a) => a.action === 'signing_request.expiry_warned').length, 4);
      assert.ok(
        audit.every((a) => a.actor === 'system'),
        'automatic entries are the system’s',
      );

      // Each mail reached the SMTP peer once; the warning's link is the one that works, the invitation's no more.
      await e.work();
      const mails = await e.smtp.parsed();
      const to = (who: string, subject: RegExp) =>
        mails.filter((m) => JSON.stringify(m.to).includes(addr(who)) && subject.test(m.subject ?? '')).length;
      assert.equal(to('ann', /^Reminder:/), 5);
      assert.equal(to('quade', /^Reminder:/), 4);
      assert.equal(to('ann', /^Expires soon:/), 1);
      assert.equal(to('bob', /^(Reminder|Expires soon)/), 0);
      assert.equal(to('none', /^Reminder:/), 0);
      assert.equal(to('none', /^Expires soon:/), 1);
      const links = await e.linksFor(addr('ann'));
      assert.equal(new Set(links).size, 1 + 5 + 1, 'invitation, five reminders, the warning: each its own link');
      const warning = mails.find((m) => JSON.stringify(m.to).includes(addr('ann')) && /^Expires soon/.test(m.subject!));
      const newest = /\/sign\/([A-Za-z0-9_-]{43})/.exec(warning!.text ?? '')![1]!;
      for (const link of links.filter((l) => l !== newest))
        assert.equal((await e.h.request('POST', `/sign/${link}/view`)).status, 404, 'earlier links are retired');
      assert.equal((await e.h.request('POST', `/sign/${newest}/view`)).status, 200, 'the warning’s link works');

      // Past expiry nothing more is sent.
      e.h.clock.advance(6 * HOUR);
      await e.h.runtime.runJob('expire-requests');
      assert.deepEqual(await bothWorkersRun(), { sent: 0, warned: 0 });
    });

    test('two schedulers ticking at once run each job once per slot', async () => {
      e.h.clock.advance(HOUR);
      const [a, b] = await Promise.all([e.h.runtime.scheduler!.tick(), worker2.scheduler!.tick()]);
      for (const job of ['send-reminders', 'warn-expiring'])
        assert.equal([...a, ...b].filter((n) => n === job).length, 1, `${job} ran once`);
    });

    test('bounds: after_days 1..60, every_days 1..30, integers; null turns them off', async () => {
      for (const bad of [
        { after_days: 0, every_days: 3 },
        { after_days: 61, every_days: 3 },
        { after_days: 2, every_days: 31 },
        { after_days: 2.5, every_days: 3 },
        { after_days: 2 },
        { after_days: 2, every_days: 3, extra: 1 },
      ]) {
        const r = await e.api('POST', '/v1/signing-requests', {
          signers: [{ role: 'a', email: addr('x'), name: 'X' }],
          file: { name: 'a.pdf', content_base64: PDF },
          placement: 'auto_append',
          reminders: bad,
        });
        assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
        assert.equal(r.json.code, 'invalid_request');
      }
      const off = await send(['off'], { reminders: null });
      assert.equal(off.reminders, null);
      const doc = await e.api('GET', `/v1/documents/${off.document_id}`);
      assert.equal(doc.json.reminders, null);
    });
  });
}
