// Automatic reminders and the expiry warning for a template recipient on the SMS channel, on SQLite and PostgreSQL,
// with two workers on one database and the Twilio transport pointed at a local peer: the clock moves in 6-hour
// steps over the request's 10 days and at every step both workers run both jobs at once, then both flush their SMS
// outbox at once. With reminders {after_days: 2, every_days: 3} and expiry on day 10, the SMS recipient gets a
// reminder on days 2 and 5 (day 8 falls in the warning window) and the warning on day 8, each as one SMS that
// reached the provider once, with a fresh link that retires the previous one; the e-mail recipient, who signs on
// day 3, gets one reminder mail and no warning.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime, type Runtime } from '../runtime.js';
import { startTwilioPeer, type TwilioPeer } from '../sms/testing/twilio-peer.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { email } from '../templates/testing/e2e.js';

const databases = await bothDatabases();
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const LINK = /\/sign\/([A-Za-z0-9_-]{43})/;
const PHONE = '+14155550142';

for (const d of databases) {
  describe(`SMS reminders and expiry warning on two workers (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let peer: TwilioPeer;
    let worker2: Runtime;
    before(async () => {
      peer = await startTwilioPeer();
      e = await startE2E({ database: d.database, tier: 'enterprise', env: peer.env });
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
      await peer?.close();
    });

    const outbox = (docId: string) =>
      e.h.db.kysely
        .selectFrom('sms_outbox')
        .selectAll()
        .where('document_id', '=', docId)
        .where('to_phone', '=', PHONE)
        .orderBy('created_at')
        .execute();
    const kinds = async (docId: string) => (await outbox(docId)).map((r) => r.template);

    test('10 days: SMS reminders on days 2 and 5, the warning on day 8, each sent once', async () => {
      const tpl = await e.api('POST', '/v1/templates', await templateBody());
      assert.equal(tpl.status, 201, tpl.text);
      const client = email('client');
      const start = e.h.clock.now();
      const r = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
        recipients: [
          { slot: 'client', name: 'Client Person', email: client },
          { slot: 'provider', name: 'Provider Person', channel: 'sms', phone: PHONE, signing_order: 1 },
        ],
        field_values: VALUES,
        expires_at: new Date(start + 10 * DAY).toISOString(),
        reminders: { after_days: 2, every_days: 3 },
      });
      assert.equal(r.status, 201, r.text);
      const docId = r.json.template_instance.document_id as string;
      await e.work();
      assert.deepEqual(await kinds(docId), ['invitation']);

      const seen: Record<number, string[]> = {};
      let reported = { sent: 0, warned: 0 };
      for (let step = 1; step < 10 * 4; step++) {
        e.h.clock.advance(6 * HOUR);
        const rs = await Promise.all([
          e.h.runtime.runJob('send-reminders'),
          worker2.runJob('send-reminders'),
          e.h.runtime.runJob('warn-expiring'),
          worker2.runJob('warn-expiring'),
        ]);
        reported = {
          sent: reported.sent + Number(rs[0].sent) + Number(rs[1].sent),
          warned: reported.warned + Number(rs[2].warned) + Number(rs[3].warned),
        };
        // Both workers' SMS senders race for the same outbox rows.
        await Promise.all([e.h.runtime.work(), worker2.work()]);
        seen[step / 4] = await kinds(docId);
        if (step === 12) {
          // Day 3: the e-mail recipient signs (after one reminder mail).
          const link = await e.linkFor(client);
          assert.equal((await e.h.request('POST', `/sign/${link}/view`, { body: {} })).status, 200);
          const s = await e.h.request('POST', `/sign/${link}/sign`, {
            body: { signature: { type: 'typed', text: 'C' } },
          });
          assert.equal(s.status, 200, s.text);
        }
      }
      assert.deepEqual(seen[1.75], ['invitation'], 'nothing before after_days');
      assert.deepEqual(seen[2], ['invitation', 'reminder']);
      assert.deepEqual(seen[4.75], ['invitation', 'reminder']);
      assert.deepEqual(seen[5], ['invitation', 'reminder', 'reminder']);
      assert.deepEqual(seen[7.75], ['invitation', 'reminder', 'reminder']);
      assert.deepEqual(seen[8], ['invitation', 'reminder', 'reminder', 'expiry_warning']);
      assert.deepEqual(seen[9.75], ['invitation', 'reminder', 'reminder', 'expiry_warning']);
      assert.deepEqual(reported, { sent: 3, warned: 1 }, 'two SMS reminders and one mail; one warning');

      // What reached the provider: each outbox row once, all sent, none by mail to the SMS recipient.
      const rows = await outbox(docId);
      assert.ok(
        rows.every((x) => x.status === 'sent'),
        `every SMS is sent: ${rows.map((x) => x.status).join(',')}`,
      );
      const delivered = peer.received.filter((m) => m.to === PHONE);
      assert.deepEqual(
        delivered.map((m) => m.body),
        rows.map((x) => x.body),
        'the provider received each SMS exactly once, in order',
      );
      assert.match(delivered[1]!.body, /^Reminder: /);
      assert.match(delivered[3]!.body, /^Expiring soon: /);
      const links = delivered.map((m) => LINK.exec(m.body)?.[1]);
      assert.ok(
        links.every((l) => l),
        'every SMS carries a signing link',
      );
      assert.equal(new Set(links).size, 4, 'each SMS its own link');
      for (const old of links.slice(0, 3))
        assert.equal((await e.h.request('POST', `/sign/${old}/view`, { body: {} })).status, 404, 'retired');
      assert.equal((await e.h.request('POST', `/sign/${links[3]}/view`, { body: {} })).status, 200, 'newest works');

      // The e-mail recipient: one reminder mail before signing on day 3, no warning.
      const mails = (await e.smtp.parsed()).filter((m) => JSON.stringify(m.to).includes(client));
      assert.equal(mails.filter((m) => /^Reminder:/.test(m.subject ?? '')).length, 1);
      assert.equal(mails.filter((m) => /^Expires soon:/.test(m.subject ?? '')).length, 0);

      const audit = await e.h.db.kysely
        .selectFrom('audit_events')
        .select(['action'])
        .where('document_id', '=', docId)
        .where('action', 'in', ['signing_request.reminded', 'signing_request.expiry_warned'])
        .execute();
      assert.equal(audit.filter((a) => a.action === 'signing_request.reminded').length, 3);
      assert.equal(audit.filter((a) => a.action === 'signing_request.expiry_warned').length, 1);
    });
  });
}
