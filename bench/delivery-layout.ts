// `npm run bench:delivery-layout`: PostgreSQL backend CPU per delivery for the claim and the record of an attempt,
// under two table layouts, interleaved. Plain SQL on tables of its own in a throwaway database: it measures a layout,
// not Signet's code.
// - today: one `deliveries` table (migrations 001-020): the due index is partial on the status and keyed by
//   next_attempt_at, and retention indexes updated_at, so recording an outcome changes indexed columns: every index
//   of the row gets a new entry (not a HOT update).
// - queue: the due state (next attempt, claim, attempt count) in a small table of open deliveries; recording an
//   outcome deletes the queue row and updates `deliveries` without touching an indexed column (HOT: no index entry),
//   retention keyed by created_at, which never changes.
// - queue+updated_at: the queue, with retention still keyed by updated_at (the record is not HOT again).
// Each round: N due rows, BATCHES claims of BATCH rows (UPDATE … FOR UPDATE SKIP LOCKED … RETURNING), each recorded
// as a success with its attempt row in one statement; the backend's CPU from /proc.
import pg from 'pg';
import { freshPostgres, postgresForTests } from '../src/testing/services.js';
import { median } from './ab-lib.js';
import { cpuMsOf } from './proc-cpu.js';

const N = 200_000;
const BATCH = 400;
const BATCHES = Number(process.env.LAYOUT_BATCHES ?? 150);
const ROUNDS = Number(process.env.LAYOUT_ROUNDS ?? 3);
type Layout = 'today' | 'queue' | 'queue+updated_at';
const LAYOUTS: Layout[] = ['today', 'queue', 'queue+updated_at'];

async function setup(c: pg.Client, layout: Layout) {
  const q = (s: string) => c.query(s);
  await q('drop table if exists layout_attempts, layout_queue, layout_deliveries');
  await q(`create table layout_deliveries (id text primary key, event_id text not null, hook_id text not null,
    workspace_id text not null, status text not null, attempts int not null default 0, next_attempt_at bigint,
    claimed_by text, claim_expires_at bigint, last_status_code int, last_error text, created_at bigint not null,
    updated_at bigint not null) with (fillfactor = 50)`);
  await q(`insert into layout_deliveries select 'dlv_' || md5(g::text), 'evt_' || md5((g / 3)::text), 'hk_' || (g % 50),
    'ws_' || (g % 5), 'pending', 0, g, null, null, null, null, g, g from generate_series(1, ${N}) g`);
  await q('create index layout_hook on layout_deliveries (hook_id, created_at)');
  await q('create index layout_page on layout_deliveries (workspace_id, created_at, id)');
  await q('create index layout_event on layout_deliveries (event_id)');
  if (layout === 'queue') await q('create index layout_created on layout_deliveries (created_at)');
  else await q('create index layout_updated on layout_deliveries (updated_at)');
  if (layout === 'today') {
    await q(`create index layout_due on layout_deliveries (next_attempt_at) where status in ('pending', 'retrying')`);
  } else {
    await q(`create table layout_queue (id text primary key, next_attempt_at bigint not null, claimed_by text,
      claim_expires_at bigint, attempts int not null default 0) with (fillfactor = 50)`);
    await q('insert into layout_queue select id, next_attempt_at, null, null, 0 from layout_deliveries');
    await q('create index layout_queue_due on layout_queue (next_attempt_at)');
  }
  await q(`create table layout_attempts (id bigserial primary key, delivery_id text not null, attempt int not null,
    started_at bigint, duration_ms int, status_code int, response_body text, error text, worker text,
    unique (delivery_id, attempt))`);
  await q('create index layout_attempts_started on layout_attempts (started_at)');
  await q('vacuum analyze');
  await q('checkpoint');
}

/** µs of backend CPU per row for the claims and for the records, and the share of HOT updates of deliveries. */
async function round(c: pg.Client, pid: number, layout: Layout) {
  await setup(c, layout);
  const table = layout === 'today' ? 'layout_deliveries' : 'layout_queue';
  const due =
    layout === 'today' ? `status in ('pending', 'retrying') and next_attempt_at <= $1` : 'next_attempt_at <= $1';
  const now = N + 1;
  let claimMs = 0;
  let recordMs = 0;
  for (let b = 0; b < BATCHES; b++) {
    const t0 = cpuMsOf(pid);
    const claimed = await c.query(
      `update ${table} set claimed_by = 'w1', claim_expires_at = $2 where id in (select id from ${table}
        where ${due} and (claim_expires_at is null or claim_expires_at < $1)
        order by next_attempt_at limit ${BATCH} for update skip locked) returning id`,
      [now, now + 60_000],
    );
    const t1 = cpuMsOf(pid);
    const ids = claimed.rows.map((r: { id: string }) => r.id);
    const attempt = `insert into layout_attempts (delivery_id, attempt, started_at, duration_ms, status_code,
      response_body, error, worker) select id, attempts, $2, 3, 200, 'ok', null, 'w1' from w`;
    if (layout === 'today') {
      await c.query(
        `with w as (update layout_deliveries d set status = 'succeeded', attempts = d.attempts + 1,
          next_attempt_at = null, claimed_by = null, claim_expires_at = null, last_status_code = 200, last_error = null,
          updated_at = $2 from unnest($1::text[]) u(id) where d.id = u.id and d.claimed_by = 'w1'
          returning d.id, d.attempts) ${attempt}`,
        [ids, now],
      );
    } else {
      await c.query(
        `with g as (delete from layout_queue q using unnest($1::text[]) u(id) where q.id = u.id
          and q.claimed_by = 'w1' returning q.id, q.attempts),
        w as (update layout_deliveries d set status = 'succeeded', attempts = g.attempts + 1, next_attempt_at = null,
          last_status_code = 200, last_error = null, updated_at = $2 from g where d.id = g.id
          returning d.id, d.attempts) ${attempt}`,
        [ids, now],
      );
    }
    claimMs += t1 - t0;
    recordMs += cpuMsOf(pid) - t1;
  }
  const rows = BATCHES * BATCH;
  // This backend's counts reach the statistics view only once flushed (otherwise about once a second).
  await c.query('select pg_stat_force_next_flush()');
  const stats = await c.query(`select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables
    where relname = 'layout_deliveries'`);
  const s = stats.rows[0] as { n_tup_upd: string; n_tup_hot_upd: string };
  return {
    claim: (claimMs * 1000) / rows,
    record: (recordMs * 1000) / rows,
    hot: Number(s.n_tup_hot_upd) / Math.max(1, Number(s.n_tup_upd)),
  };
}

const check = await postgresForTests();
if ('skip' in check) {
  console.log(`delivery-layout: skipped (${check.skip})`);
} else {
  const fresh = await freshPostgres(check.url);
  const c = new pg.Client(fresh.url);
  await c.connect();
  try {
    const pid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    const results = new Map<Layout, { claim: number; record: number; hot: number }[]>();
    for (let r = 0; r < ROUNDS; r++)
      for (const layout of LAYOUTS) {
        const x = await round(c, pid, layout);
        results.set(layout, [...(results.get(layout) ?? []), x]);
        console.log(`round ${r + 1} ${layout}: claim ${x.claim.toFixed(1)}, record ${x.record.toFixed(1)} µs/row`);
      }
    console.log(`\n${N} due rows, ${BATCHES} claims of ${BATCH}; backend CPU µs per delivery, median of ${ROUNDS}\n`);
    console.log('| layout | claim | record | both | HOT share of updates |');
    console.log('|---|---|---|---|---|');
    for (const [layout, xs] of results) {
      const [c1, r1] = [median(xs.map((x) => x.claim)), median(xs.map((x) => x.record))];
      const hot = median(xs.map((x) => x.hot));
      console.log(
        `| ${layout} | ${c1.toFixed(1)} | ${r1.toFixed(1)} | ${(c1 + r1).toFixed(1)} | ${(hot * 100).toFixed(0)}% |`,
      );
    }
  } finally {
    await c.end();
    await fresh.drop();
  }
}
