import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { createMailer } from './mailer.js';
import { getMail, listOutbox } from './outbox.js';
import type { OutgoingMail } from './outbox.js';
import { sendNow } from './testing/send-now.js';
import { startSmtpPeer, type SmtpPeer } from './testing/smtp-peer.js';

const pg = await postgresForTests();
const FROM = 'Signet <no-reply@signet.test>';

const mail = (workspaceId: string, i: number, documentId: string): OutgoingMail => ({
  workspaceId,
  to: { email: `p${i}@example.com`, name: `Ελένη ${i}` },
  locale: 'de',
  template: 'invitation',
  vars: {
    signerName: `Ελένη ${i}`,
    documentTitle: 'Vertrag',
    baseUrl: 'http://localhost:3000',
    token: `tok_pg_${i}`,
    expiresAt: Date.parse('2026-12-06T10:00:00Z'),
  },
  documentId,
});

describe('mailer on PostgreSQL', { skip: 'skip' in pg ? pg.skip : false }, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Db;
  let other: Db;
  let peer: SmtpPeer;
  const clock = new ManualClock(Date.parse('2026-11-22T10:00:00.000Z'));
  let wsId: string;

  before(async () => {
    fresh = await freshPostgres((pg as { url: string }).url);
    db = fresh.db;
    other = await openDb(fresh.url, { migrate: false });
    peer = await startSmtpPeer();
    wsId = (
      await createWorkspace(
        db.kysely,
        { name: 'Łódź Sp. z o.o.', tier: 'business', replyTo: 'biuro@lodz.example' },
        clock.now(),
      )
    ).id;
  });

  after(async () => {
    await peer?.close();
    await other?.close();
    await fresh?.drop();
  });

  test('send, rollback and Reply-To behave as on SQLite', async () => {
    const mailer = createMailer({ db, clock, smtpUrl: peer.url, from: FROM });
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await mailer.enqueue(trx, mail(wsId, 0, 'doc_rb'));
        throw new Error('rollback');
      }),
    );
    assert.equal((await listOutbox(db, { documentId: 'doc_rb' })).length, 0);
    const r = await sendNow(db, mailer, mail(wsId, 0, 'doc_one'));
    assert.equal(r.status, 'sent');
    await mailer.close();
    const [m] = await peer.parsed();
    assert.equal(m!.replyTo?.value[0]?.address, 'biuro@lodz.example');
    assert.equal(m!.from?.value[0]?.name, 'Łódź Sp. z o.o. via Signet');
    assert.ok(
      m!.text?.includes('http://localhost:3000/sign/tok_pg_0'),
      "m!.text?.includes('http://localhost:3000/sign/tok_pg_0')",
    );
    assert.equal((await getMail(db, r.id))?.status, 'sent');
  });

  test('four flushers on two pools deliver each message exactly once', async () => {
    const first = peer.received.length;
    const mailers = [db, other, db, other].map((d, i) =>
      createMailer({ db: d, clock, smtpUrl: peer.url, from: FROM, workerId: `w${i}`, batchSize: 4 }),
    );
    const ids = await db.kysely.transaction().execute(async (trx) => {
      const out: string[] = [];
      for (let i = 1; i <= 60; i++) out.push((await mailers[0]!.enqueue(trx, mail(wsId, i, 'doc_race'))).id);
      return out;
    });
    const counts = await Promise.all(mailers.map((m) => m.flush()));
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      60,
    );
    const got = (await peer.parsed()).slice(first).map((m) => m.messageId);
    assert.equal(got.length, 60);
    assert.deepEqual([...new Set(got)].sort(), ids.map((id) => `<${id}@signet.test>`).sort());
    const rows = await listOutbox(db, { documentId: 'doc_race', limit: 100 });
    assert.equal(rows.length, 60);
    assert.ok(
      rows.every((r) => r.status === 'sent' && r.attempts === 1),
      "rows.every((r) => r.status === 'sent' && r.attempts === 1)",
    );
    await Promise.all(mailers.map((m) => m.close()));
  });
});
