// The delivery claim and record as a worker runs them on PostgreSQL: named statements (db/pg-prepared.ts), whose plan
// after their first five runs is the generic one. With 20,000 deliveries queued and 20,000 hooks (analyzed), no such
// plan reads a whole table. The claim's `IN (subquery)` had been planned as a hash join over a scan of every queued
// row, each claim (BENCHMARKS.md, issue 25).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { captureStatements, type CapturedStatement } from '../db/db.js';
import { genericPlanOf } from '../db/query-plans.js';
import { ManualClock } from '../lib/clock.js';
import { PREPARED } from '../db/pg-prepared.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { claimDue, recordOutcomes } from './deliveries.repo.js';
import { attemptOutcome, seed } from './testing/dispatcher.js';

const pg = await postgresForTests();
const BACKLOG = 20_000;

describe('the delivery claim and record, planned once (PostgreSQL)', { skip: 'skip' in pg ? pg.skip : false }, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgres>>;
  const statements: CapturedStatement[] = [];
  before(async () => {
    captureStatements((s) => statements.push(s));
    try {
      fresh = await freshPostgres((pg as { url: string }).url);
    } finally {
      captureStatements(null);
    }
  });
  after(async () => {
    await fresh?.drop();
  });

  test(`their generic plans read no whole table, with ${BACKLOG} deliveries queued, of as many events`, async () => {
    const { db } = fresh;
    const clock = new ManualClock(Date.parse('2026-12-06T00:00:00Z'));
    const s = await seed(db, clock, 'http://127.0.0.1:9/hook', 1);
    // Copies of the seeded event, and of its delivery to each: every copy queued by the insert trigger, due now.
    const copies = (table: 'events' | 'deliveries', prefix: string, changes: ReturnType<typeof sql>) =>
      sql`insert into ${sql.table(table)} select (jsonb_populate_record(null::${sql.table(table)},
          to_jsonb(t) || ${changes})).*
        from ${sql.table(table)} t, generate_series(1, ${BACKLOG}) g where t.${sql.ref(prefix)} = ${s.eventIds[0]!}`;
    await copies('events', 'id', sql`jsonb_build_object('id', 'evt_backlog_' || g)`).execute(db.kysely);
    await copies(
      'deliveries',
      'event_id',
      sql`jsonb_build_object('id', 'dlv_backlog_' || g, 'event_id', 'evt_backlog_' || g)`,
    ).execute(db.kysely);
    // Hooks grow too: every document's callback_url is one (retired, not deleted, once it ended).
    await sql`insert into hooks select (jsonb_populate_record(null::hooks,
        to_jsonb(h) || jsonb_build_object('id', 'hook_retired_' || g, 'deleted_at', h.created_at))).*
      from hooks h, generate_series(1, ${BACKLOG}) g`.execute(db.kysely);
    await sql`analyze`.execute(db.kysely);
    statements.length = 0;
    const claimed = await claimDue(db, { now: clock.now(), workerId: 'planner', leaseMs: 60_000, limit: 400 });
    assert.equal(claimed.length, 400);
    const outcomes = claimed.map((c) => attemptOutcome(c.id, clock.now()));
    assert.equal(await recordOutcomes(db, 'planner', outcomes), 400);
    // The dispatcher's next claim after a full one skips the look for a free row.
    const looks = (from: number) =>
      statements.slice(from).filter((st) => /^select 1 from "delivery_queue"/.test(st.sql));
    const before = statements.length;
    const next = { now: clock.now(), workerId: 'planner', leaseMs: 60_000, limit: 400, look: false };
    assert.equal((await claimDue(db, next)).length, 400);
    assert.deepEqual(looks(before), []);
    assert.equal(looks(0).length, 1, 'the first claim looked');
    const named = statements.filter((st) => st.sql.endsWith(PREPARED));
    const heads = named.map((st) => st.sql.trim().slice(0, 30));
    assert.ok(
      heads.some((h) => /^update "delivery_queue"/.test(h)),
      `the claim was captured: ${heads.join(' | ')}`,
    );
    assert.ok(
      heads.some((h) => /^WITH done/.test(h)),
      `the record was captured: ${heads.join(' | ')}`,
    );
    for (const st of named) {
      const steps = await genericPlanOf(db, st);
      const plan = `${st.sql.slice(0, 80)}\n${steps.map((p) => p.how).join('\n')}`;
      assert.deepEqual(
        steps.filter((p) => p.fullScan),
        [],
        plan,
      );
    }
  });
});
