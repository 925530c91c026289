// The prune jobs with the clock moved, on SQLite and PostgreSQL: at each table's boundary one row just outside the
// window goes and one just inside stays; a live document's rows, pending deliveries and unsent mail stay; batches
// are bounded; a run stops at its budget; two pruners at once delete each row once and never wait on each other.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { openDb, type Db } from '../db/db.js';
import { ManualClock, type Clock } from '../lib/clock.js';
import { IDEMPOTENCY_TTL_MS } from '../limits.js';
import { KEY_USES_PRUNE } from '../keys/key-uses.repo.js';
import { scheduledJobs } from '../runtime.js';
import { SESSION_IDLE_MS } from '../dashboard/people.service.js';
import { WEBHOOK_PRUNE_TARGETS } from '../webhooks/retention.repo.js';
import { bothDatabases, freshPostgres } from '../testing/services.js';
import { runJob } from './scheduler.js';
import { prune } from './prune.js';
import { pruneBatch } from './prune.repo.js';
import * as seed from './testing/retention.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-12-01T12:00:00Z');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-prune-'));
const config = loadConfig({ DATA_DIR: dataDir });
const R = config.retention;

for (const d of await bothDatabases()) {
  describe(`retention and pruning (${d.name})`, { skip: d.skip }, () => {
    let db: Db;
    let url: string;
    let drop: () => Promise<void>;
    let clock: ManualClock;
    const run = (name: string) => runJob(scheduledJobs({ db, clock, config }), name);

    before(async () => {
      if (d.database === 'sqlite') {
        url = `sqlite:${path.join(dataDir, `t-${process.pid}.db`)}`;
        db = await openDb(url);
        drop = () => db.close();
      } else {
        const fresh = await freshPostgres(d.database.postgresAdminUrl);
        db = fresh.db;
        url = fresh.url;
        drop = fresh.drop;
      }
    });
    after(async () => {
      await drop?.();
    });
    beforeEach(async () => {
      clock = new ManualClock(NOW);
      for (const t of ['delivery_attempts', 'deliveries', 'events', 'mail_outbox', 'sms_outbox', 'key_uses'] as const)
        await db.kysely.deleteFrom(t).execute();
      for (const t of ['idempotency_keys', 'job_runs', 'dashboard_sessions', 'user_tokens', 'embed_sessions'] as const)
        await db.kysely.deleteFrom(t).execute();
      for (const t of ['signing_requests', 'documents', 'hooks', 'users', 'workspaces'] as const)
        await db.kysely.deleteFrom(t).execute();
      await seed.seedBase(db, NOW - 400 * DAY);
    });

    test('events: settled deliveries past the window go with their attempts, then their events; the rest stays', async () => {
      const cut = NOW - R.eventsMs;
      const old = cut - DAY;
      await seed.insertEvent(db, 'ev_gone', old);
      await seed.insertDelivery(db, 'del_gone', 'ev_gone', 'succeeded', cut - 1, 3);
      await seed.insertEvent(db, 'ev_edge', old);
      await seed.insertDelivery(db, 'del_edge', 'ev_edge', 'giving_up', cut, 7); // exactly at the boundary: kept
      await seed.insertEvent(db, 'ev_retrying', old);
      await seed.insertDelivery(db, 'del_retrying', 'ev_retrying', 'retrying', old, 2);
      await seed.insertDelivery(db, 'del_pending', 'ev_retrying', 'pending', old, 0);
      await seed.insertDelivery(db, 'del_sibling', 'ev_retrying', 'succeeded', old, 1); // goes; its event stays
      await seed.insertEvent(db, 'ev_live', old, seed.LIVE_DOC);
      await seed.insertDelivery(db, 'del_live', 'ev_live', 'succeeded', old, 1);
      await seed.insertEvent(db, 'ev_live_bare', old, seed.LIVE_DOC); // no hook matched: no delivery holds it
      await seed.insertEvent(db, 'ev_ended', old, seed.ENDED_DOC);
      await seed.insertDelivery(db, 'del_ended', 'ev_ended', 'giving_up', old, 7);
      await seed.insertEvent(db, 'ev_bare_gone', cut - 1);
      await seed.insertEvent(db, 'ev_bare_edge', cut);

      const r = await run('prune-events');
      assert.deepEqual(r.tables, { delivery_attempts: 3 + 1 + 7, deliveries: 3, events: 3, hooks: 0 });
      assert.deepEqual(await seed.idsOf(db, 'events'), [
        'ev_bare_edge',
        'ev_edge',
        'ev_live',
        'ev_live_bare',
        'ev_retrying',
      ]);
      assert.deepEqual(await seed.idsOf(db, 'deliveries'), ['del_edge', 'del_live', 'del_pending', 'del_retrying']);
      assert.deepEqual(await seed.idsOf(db, 'delivery_attempts', 'delivery_id'), [
        ...Array(7).fill('del_edge'),
        'del_live',
        'del_retrying',
        'del_retrying',
      ]);

      // The document ends and a millisecond passes: its history and the boundary rows go; the pending ones stay.
      await db.kysely.updateTable('documents').set({ status: 'completed' }).where('id', '=', seed.LIVE_DOC).execute();
      clock.advance(1);
      await run('prune-events');
      assert.deepEqual(await seed.idsOf(db, 'events'), ['ev_retrying']);
      assert.deepEqual(await seed.idsOf(db, 'deliveries'), ['del_pending', 'del_retrying']);
    });

    test('key uses, idempotency keys and job runs: a row just outside the window goes, one just inside stays', async () => {
      await seed.insertKeyUse(db, NOW - R.keyUsesMs - 1);
      await seed.insertKeyUse(db, NOW - R.keyUsesMs);
      const idem = (idem_key: string, created_at: number) => ({
        key_id: 'key_r',
        idem_key,
        fingerprint: 'f',
        state: 'done',
        status_code: 201,
        response_body: '{}',
        content_type: 'application/json',
        created_at,
        locked_until: created_at,
      });
      // A key is honoured for 24 h and expires at exactly 24 h (as beginIdempotent sees it).
      await db.kysely
        .insertInto('idempotency_keys')
        .values([idem('gone', NOW - IDEMPOTENCY_TTL_MS), idem('kept', NOW - IDEMPOTENCY_TTL_MS + 1)])
        .execute();
      const slot = (name: string, started_at: number) => ({
        name,
        slot: started_at,
        claimed_by: 'w',
        started_at,
        finished_at: started_at,
        result: '{}',
      });
      await db.kysely
        .insertInto('job_runs')
        .values([slot('gone', NOW - R.jobRunsMs - 1), slot('kept', NOW - R.jobRunsMs)])
        .execute();

      assert.equal((await run('prune-key-uses')).deleted, 1);
      assert.deepEqual(await seed.idsOf(db, 'key_uses', 'at'), [String(NOW - R.keyUsesMs)]);
      assert.equal((await run('prune-idempotency')).deleted, 1);
      assert.deepEqual(await seed.idsOf(db, 'idempotency_keys', 'idem_key'), ['kept']);
      assert.equal((await run('prune-job-runs')).deleted, 1);
      assert.deepEqual(await seed.idsOf(db, 'job_runs', 'name'), ['kept']);
    });

    test('outboxes: sent and logged rows past the window go; unsent, live-document and recent rows stay', async () => {
      const cut = NOW - R.outboxMs;
      await seed.insertMail(db, 'mail_gone', 'sent', cut - 1);
      await seed.insertMail(db, 'mail_logged_gone', 'logged', cut - 1, seed.ENDED_DOC);
      await seed.insertMail(db, 'mail_edge', 'sent', cut);
      await seed.insertMail(db, 'mail_queued', 'queued', null);
      await seed.insertMail(db, 'mail_failed', 'failed', null);
      await seed.insertMail(db, 'mail_live', 'sent', cut - DAY, seed.LIVE_DOC);
      await seed.insertSms(db, 'sms_gone', 'sent', cut - 1);
      await seed.insertSms(db, 'sms_edge', 'sent', cut);
      await seed.insertSms(db, 'sms_queued', 'queued', null);

      const r = await run('prune-outboxes');
      assert.deepEqual(r.tables, { mail_outbox: 2, sms_outbox: 1 });
      assert.deepEqual(await seed.idsOf(db, 'mail_outbox'), ['mail_edge', 'mail_failed', 'mail_live', 'mail_queued']);
      assert.deepEqual(await seed.idsOf(db, 'sms_outbox'), ['sms_edge', 'sms_queued']);
    });

    test('ended sessions and links go a retention after they ended; live ones stay', async () => {
      const cut = NOW - R.sessionsMs;
      const session = (token_hash: string, last_seen_at: number, revoked_at: number | null) => ({
        token_hash,
        user_id: seed.USER,
        workspace_id: seed.WS,
        created_at: last_seen_at - DAY,
        last_seen_at,
        revoked_at,
        ip: null,
        user_agent: null,
      });
      await db.kysely
        .insertInto('dashboard_sessions')
        .values([
          session('revoked_gone', cut - 10, cut - 1),
          session('revoked_edge', cut - 10, cut),
          session('idle_gone', cut - SESSION_IDLE_MS - 1, null),
          session('idle_edge', cut - SESSION_IDLE_MS, null), // ended exactly at the cutoff
          session('active', NOW, null),
        ])
        .execute();
      const token = (token_hash: string, expires_at: number, used_at: number | null) => ({
        token_hash,
        kind: 'set_password',
        user_id: seed.USER,
        workspace_id: seed.WS,
        created_by: null,
        created_at: Math.min(expires_at, used_at ?? expires_at) - DAY,
        expires_at,
        used_at,
      });
      await db.kysely
        .insertInto('user_tokens')
        .values([
          token('used_gone', NOW + DAY, cut - 1),
          token('used_edge', NOW + DAY, cut),
          token('expired_gone', cut - 1, null),
          token('expired_edge', cut, null),
          token('open', NOW + DAY, null),
        ])
        .execute();

      const r = await run('prune-sessions');
      assert.deepEqual(r.tables, { dashboard_sessions: 2, user_tokens: 2 });
      assert.deepEqual(await seed.idsOf(db, 'dashboard_sessions', 'token_hash'), [
        'active',
        'idle_edge',
        'revoked_edge',
      ]);
      assert.deepEqual(await seed.idsOf(db, 'user_tokens', 'token_hash'), ['expired_edge', 'open', 'used_edge']);
    });

    test('embedded sessions go a retention after they expired', async () => {
      const cut = NOW - R.sessionsMs;
      await db.kysely
        .insertInto('signing_requests')
        .values({
          id: 'req_r',
          document_id: seed.ENDED_DOC,
          workspace_id: seed.WS,
          slot: 0,
          role: 'signer',
          email: 's@example.test',
          name: 'S',
          status: 'signed',
          token_hash: 'req_r_hash',
          expires_at: NOW,
          created_at: NOW - 400 * DAY,
          updated_at: NOW - 400 * DAY,
        } as never)
        .execute();
      const es = (id: string, expires_at: number) => ({
        id,
        workspace_id: seed.WS,
        signing_request_id: 'req_r',
        key_id: 'key_r',
        origin: 'https://host.example',
        locale: 'en',
        token_hash: `${id}_hash`,
        created_at: expires_at - 900_000,
        expires_at,
      });
      await db.kysely
        .insertInto('embed_sessions')
        .values([es('es_gone', cut - 1), es('es_edge', cut)])
        .execute();
      assert.equal((await run('prune-embed-sessions')).deleted, 1);
      assert.deepEqual(await seed.idsOf(db, 'embed_sessions'), ['es_edge']);
    });

    test('batches are bounded: one statement deletes at most the batch size, the job repeats until a short one', async () => {
      for (let i = 0; i < 25; i++) await seed.insertKeyUse(db, NOW - R.keyUsesMs - 1000 + i);
      await seed.insertKeyUse(db, NOW);
      assert.equal(await pruneBatch(db, KEY_USES_PRUNE, NOW - R.keyUsesMs, 10, NOW), 10);
      assert.equal((await seed.idsOf(db, 'key_uses')).length, 16);
      const r = await prune(db, clock, [KEY_USES_PRUNE], { retentionMs: R.keyUsesMs, batchRows: 4 });
      assert.deepEqual(r, { deleted: 15, batches: 4, more: false, tables: { key_uses: 15 } }, '4 + 4 + 4 + 3');
      assert.deepEqual(await seed.idsOf(db, 'key_uses', 'at'), [String(NOW)]);
    });

    test('a run stops when its time budget is spent; the next run goes on from there', async () => {
      for (let i = 0; i < 30; i++) await seed.insertKeyUse(db, NOW - R.keyUsesMs - 1000 + i);
      let t = NOW;
      const ticking: Clock = { now: () => (t += 60_000) }; // every look at the clock is a minute later
      const o = { retentionMs: R.keyUsesMs, batchRows: 5, budgetMs: 150_000 };
      const first = await prune(db, ticking, [KEY_USES_PRUNE], o);
      assert.deepEqual(first, { deleted: 10, batches: 2, more: true, tables: { key_uses: 10 } });
      const second = await prune(db, new ManualClock(NOW), [KEY_USES_PRUNE], o);
      assert.equal(second.deleted, 20);
      assert.equal(second.more, false);
    });

    test('two pruners at once, on two connections: every expired row is deleted once, counted once', async () => {
      const old = NOW - R.eventsMs - DAY;
      const events = 120;
      for (let i = 0; i < events; i++) {
        await seed.insertEvent(db, `ev_${i}`, old + i);
        await seed.insertDelivery(db, `del_${i}`, `ev_${i}`, 'succeeded', old + i, 2);
      }
      await seed.insertEvent(db, 'ev_new', NOW);
      await seed.insertDelivery(db, 'del_new', 'ev_new', 'succeeded', NOW, 2);
      const other = await openDb(url, { migrate: false });
      try {
        const targets = WEBHOOK_PRUNE_TARGETS;
        const o = { retentionMs: R.eventsMs, batchRows: 7 };
        const [a, b] = await Promise.all([prune(db, clock, targets, o), prune(other, clock, targets, o)]);
        const sum = (t: string) => (a.tables[t] ?? 0) + (b.tables[t] ?? 0);
        assert.deepEqual(
          { attempts: sum('delivery_attempts'), deliveries: sum('deliveries'), events: sum('events') },
          { attempts: 2 * events, deliveries: events, events },
        );
        assert.ok(a.deleted > 0 && b.deleted > 0, `both worked: ${a.deleted} and ${b.deleted}`);
      } finally {
        await other.close();
      }
      assert.deepEqual(await seed.idsOf(db, 'events'), ['ev_new']);
      assert.equal((await seed.idsOf(db, 'delivery_attempts')).length, 2);
    });

    if (d.database !== 'sqlite') {
      test('a pruner skips rows another transaction holds instead of waiting for them', async () => {
        for (let i = 0; i < 20; i++) await seed.insertKeyUse(db, NOW - R.keyUsesMs - 1000 + i);
        const other = await openDb(url, { migrate: false });
        try {
          let release!: () => void;
          const held = new Promise<void>((r) => (release = r));
          let locked!: () => void;
          const isLocked = new Promise<void>((r) => (locked = r));
          const holder = db.kysely.transaction().execute(async (trx) => {
            await trx.selectFrom('key_uses').select('id').orderBy('at').limit(5).forUpdate().execute();
            locked();
            await held;
          });
          await isLocked;
          const o = { retentionMs: R.keyUsesMs, batchRows: 4 };
          const timeout = new Promise((_, reject) =>
            setTimeout(() => reject(new Error('the pruner waited')), 5000).unref(),
          );
          try {
            const r = await Promise.race([prune(other, clock, [KEY_USES_PRUNE], o), timeout]);
            assert.equal((r as { deleted: number }).deleted, 15, 'all but the 5 held rows');
          } finally {
            release();
            await holder;
          }
          assert.equal((await prune(other, clock, [KEY_USES_PRUNE], o)).deleted, 5);
        } finally {
          await other.close();
        }
      });
    }
  });
}

after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('every job slot is shorter than the least job-runs retention, so a current slot row is never pruned', async () => {
  const db = await openDb('sqlite::memory:');
  const jobs = scheduledJobs({ db, clock: new ManualClock(NOW), config });
  const least = loadConfig({ RETENTION_JOB_RUNS_DAYS: '2' }).retention.jobRunsMs;
  for (const [name, job] of Object.entries(jobs)) assert.ok(job.everyMs < least, `${name}: ${job.everyMs}`);
  await db.close();
});
