// The lease claim and the claim-guarded write, on both databases, over a real table (the mail outbox).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { captureStatements, openDb, type Db } from '../db/db.js';
import { MAIL_LEASE } from '../mail/outbox.repo.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { claimLeases, guardedDelete, writeUnderLease } from './lease.repo.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');

async function seed(db: Db, n: number, due = T0) {
  const ids = Array.from({ length: n }, (_, i) => `mail_${String(i).padStart(3, '0')}`);
  await db.kysely
    .insertInto('mail_outbox')
    .values(
      ids.map((id, i) => ({
        id,
        workspace_id: 'ws_1',
        document_id: null,
        signing_request_id: null,
        template: 'invitation',
        locale: 'en',
        to_email: `${i}@example.com`,
        to_name: 'X',
        from_name: 'Acme',
        reply_to: null,
        subject: 's',
        text: 't',
        html: 'h',
        status: 'queued',
        attempts: 0,
        next_attempt_at: due + i,
        claimed_by: null,
        claim_expires_at: null,
        last_error: null,
        message_id: null,
        created_at: T0,
        updated_at: T0,
        sent_at: null,
      })),
    )
    .execute();
  return ids;
}

function suite(open: () => Promise<{ db: Db; other: Db; url: string; close(): Promise<void> }>) {
  let db: Db;
  let other: Db;
  let url: string;
  let close: () => Promise<void>;
  before(async () => ({ db, other, url, close } = await open()));
  after(() => close());
  // RETURNING gives no order: sort for comparison (the claim's own order decides which rows a limit takes).
  const claim = async (d: Db, workerId: string, now = T0, limit = 100) =>
    (await claimLeases(d, MAIL_LEASE, { now, workerId, leaseMs: 60_000, limit })).sort((x, y) =>
      x.id.localeCompare(y.id),
    );

  test('only due rows, oldest first, up to the limit; a held lease keeps them until it lapses', async () => {
    await db.kysely.deleteFrom('mail_outbox').execute();
    const ids = await seed(db, 5);
    const first = await claim(db, 'a', T0 + 2, 2);
    assert.deepEqual(
      first.map((r) => r.id),
      ids.slice(0, 2),
    );
    assert.ok(
      first.every((r) => r.claimed_by === 'a' && r.claim_expires_at === T0 + 2 + 60_000),
      "first.every((r) => r.claimed_by === 'a' && r.claim_expires_at === T0 + 2 + 60_000)",
    );
    assert.deepEqual(
      (await claim(db, 'b', T0 + 2)).map((r) => r.id),
      [ids[2]],
      'not due yet: rows 3 and 4',
    );
    const later = await claim(db, 'c', T0 + 60_001);
    assert.deepEqual(
      later.map((r) => r.id),
      ids.slice(3),
      'the now-due rows, not the three held ones',
    );
    assert.deepEqual(
      (await claim(db, 'd', T0 + 60_002)).map((r) => r.id),
      ids.slice(0, 3),
      'leases lapsed: taken again',
    );
  });

  test('a claim that finds nothing is one read: no write, no SET LOCAL, no transaction; one told to skip it claims', async () => {
    await db.kysely.deleteFrom('mail_outbox').execute();
    await seed(db, 2, T0 + 60_000); // not due yet
    const seen: string[] = [];
    captureStatements((s) => seen.push(s.sql));
    let watched: Db;
    try {
      watched = await openDb(url, { migrate: false });
    } finally {
      captureStatements(null);
    }
    try {
      assert.deepEqual(
        await claimLeases(watched, MAIL_LEASE, { now: T0, workerId: 'a', leaseMs: 60_000, limit: 10 }),
        [],
      );
      assert.equal(seen.length, 1, seen.join('\n'));
      assert.match(seen[0]!, /^select\b/i);
      // With a row due, the same look is followed by the claim.
      seen.length = 0;
      const got = await claimLeases(watched, MAIL_LEASE, {
        now: T0 + 60_000,
        workerId: 'a',
        leaseMs: 60_000,
        limit: 10,
      });
      assert.equal(got.length, 1);
      assert.ok(
        seen.some((q) => /^update\b/i.test(q)),
        seen.join('\n'),
      );
      // `look: false` (the caller's last claim came back full) goes straight to the claim.
      seen.length = 0;
      const next = { now: T0 + 60_001, workerId: 'a', leaseMs: 60_000, limit: 10, look: false };
      assert.equal((await claimLeases(watched, MAIL_LEASE, next)).length, 1);
      assert.ok(!seen.some((q) => /^select\b/i.test(q)), seen.join('\n'));
    } finally {
      await watched.close();
    }
  });

  test('concurrent claimers on two connections take disjoint rows', async () => {
    await db.kysely.deleteFrom('mail_outbox').execute();
    const ids = await seed(db, 40);
    const batches = await Promise.all([0, 1, 2, 3].map((i) => claim(i % 2 ? other : db, `w${i}`, T0 + 100, 7)));
    const got = batches.flat().map((r) => r.id);
    assert.equal(new Set(got).size, got.length, 'no row claimed twice');
    assert.equal(got.length, 28);
    assert.ok(
      got.every((id) => ids.includes(id)),
      'got.every((id) => ids.includes(id))',
    );
  });

  test('an outcome is written only by the holder, only with the attempt count it claimed at', async () => {
    await db.kysely.deleteFrom('mail_outbox').execute();
    const [id] = await seed(db, 1);
    await claim(db, 'a');
    const write = (worker: string, attempts: number) =>
      writeUnderLease(
        db.kysely,
        MAIL_LEASE,
        id!,
        worker,
        { status: 'sent', attempts: attempts + 1 },
        { release: true, attempts },
      );
    assert.equal(await write('b', 0), false, 'not the holder');
    assert.equal(await write('a', 5), false, 'an attempt was recorded since');
    assert.equal(await write('a', 0), true);
    const row = await db.kysely.selectFrom('mail_outbox').selectAll().where('id', '=', id!).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.attempts, row.claimed_by, row.claim_expires_at], ['sent', 1, null, null]);
    assert.equal(await write('a', 0), false, 'the claim ended with the write');
  });

  test('a batched delete applies the same guard to each row: only the holder, only at the claimed attempt count', async () => {
    await db.kysely.deleteFrom('mail_outbox').execute();
    const ids = await seed(db, 4);
    await claim(db, 'a', T0 + 10, 3);
    await claim(db, 'b', T0 + 10, 1);
    const deleted = await guardedDelete(db, db.kysely, MAIL_LEASE, 'a', [
      { id: ids[0]!, attempts: 0 },
      { id: ids[1]!, attempts: 5 },
      { id: ids[2]!, attempts: 0 },
      { id: ids[3]!, attempts: 0 },
    ]).execute(db.kysely);
    assert.deepEqual(
      deleted.rows.map((r) => r.id).sort(),
      [ids[0], ids[2]],
      'row 1: attempts moved since the claim; row 3: b holds it',
    );
    const rows = await db.kysely.selectFrom('mail_outbox').selectAll().orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.id, r.claimed_by]),
      [
        [ids[1], 'a'],
        [ids[3], 'b'],
      ],
    );
  });

  test('without release the lease stays, and extra guards apply', async () => {
    await db.kysely.deleteFrom('mail_outbox').execute();
    const [id] = await seed(db, 1);
    await claim(db, 'a');
    assert.equal(
      await writeUnderLease(
        db.kysely,
        MAIL_LEASE,
        id!,
        'a',
        { last_error: 'x' },
        { release: false, where: { status: 'sent' } },
      ),
      false,
    );
    assert.equal(
      await writeUnderLease(
        db.kysely,
        MAIL_LEASE,
        id!,
        'a',
        { last_error: 'x', claim_expires_at: T0 + 5 },
        { release: false, where: { status: ['queued', 'sent'] } },
      ),
      true,
    );
    const row = await db.kysely.selectFrom('mail_outbox').selectAll().where('id', '=', id!).executeTakeFirstOrThrow();
    assert.deepEqual([row.last_error, row.claimed_by, row.claim_expires_at], ['x', 'a', T0 + 5]);
  });
}

describe('lease claims (SQLite)', () => {
  suite(async () => {
    const dir = (await import('node:fs')).mkdtempSync(`${(await import('node:os')).tmpdir()}/signet-lease-`);
    const db = await openDb(`sqlite:${dir}/signet.db`);
    const other = await openDb(`sqlite:${dir}/signet.db`, { migrate: false });
    return {
      db,
      other,
      url: `sqlite:${dir}/signet.db`,
      async close() {
        await other.close();
        await db.close();
        (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

const pg = await postgresForTests();
describe('lease claims (PostgreSQL)', { skip: 'skip' in pg ? pg.skip : false }, () => {
  suite(async () => {
    const fresh = await freshPostgres((pg as { url: string }).url);
    const other = await openDb(fresh.url, { migrate: false });
    return {
      db: fresh.db,
      other,
      url: fresh.url,
      async close() {
        await other.close();
        await fresh.drop();
      },
    };
  });
});
