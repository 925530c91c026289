// 027 replaces 026's search-key function with a faster one (PostgreSQL): it must give every text the same set of
// keys, so that the GIN indexes built with 026's function stay valid without a rebuild.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { migrateToLatest } from './migrate.js';
import type { Db } from './db.js';
import type { Database } from './schema.js';

const pgCheck = await postgresForTests();
const skip = 'skip' in pgCheck ? pgCheck.skip : false;

const AT = Date.parse('2026-03-04T05:06:07Z');
const TEXTS = [
  '',
  'ab',
  'abc',
  'Mutual NDA 2026',
  'aaaaaa',
  'ÇAĞRI İŞLEM Straße',
  '山田太郎の契約書',
  'Иван Петров',
  'محمد علي',
  'देवनागरी नाम',
  '100%_off "quoted"',
  'emoji 👩‍💼 contract',
  'priya.sharma+sales@example.co.in',
];

describe('PostgreSQL: 027 search keys are 026 search keys', { skip }, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Db;
  before(async () => {
    fresh = await freshPostgres((pgCheck as { url: string }).url, '026-search-keys');
    db = fresh.db;
  });
  after(async () => {
    await fresh?.drop();
  });

  const keySets = async () =>
    Promise.all(
      TEXTS.map(async (t, i) => {
        const r = await sql<{
          k: string[];
        }>`select signet_search_keys(${AT + i * 86_400_000}::bigint, ${t}) as k`.execute(db.kysely);
        return [...new Set(r.rows[0]!.k)].sort();
      }),
    );
  // Read with sequential scans off, in one transaction, so the rows come through the index.
  const found = async (k: Kysely<Database>, needle: string) => {
    const r = await sql<{
      s: string;
    }>`select s from t where signet_search_keys(at, s) @> signet_search_keys(${AT}::bigint, ${needle})
      order by s`.execute(k);
    return r.rows.map((x) => x.s);
  };

  test('same keys for every text, and an index built before 027 answers after it', async () => {
    const before026 = await keySets();
    assert.ok(before026[3]!.length > 10, 'the sample has keys');
    await sql`create table t (at bigint not null, s text not null)`.execute(db.kysely);
    await sql`create index t_keys on t using gin (signet_search_keys(at, s))`.execute(db.kysely);
    await sql`insert into t values (${AT}, 'Mutual NDA 2026'), (${AT}, 'Иван Петров')`.execute(db.kysely);

    await migrateToLatest(db);
    const lang = await sql<{ l: string }>`select l.lanname as l from pg_proc p join pg_language l on l.oid = p.prolang
      where p.proname = 'signet_search_keys'`.execute(db.kysely);
    assert.deepEqual(lang.rows, [{ l: 'plpgsql' }]);
    assert.deepEqual(await keySets(), before026);

    await sql`insert into t values (${AT}, 'Mutual consent'), (${AT}, 'Иванов')`.execute(db.kysely);
    await db.kysely.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const plan = await sql<{ 'QUERY PLAN': string }>`explain select s from t
        where signet_search_keys(at, s) @> signet_search_keys(${AT}::bigint, 'x')`.execute(trx);
      assert.match(plan.rows.map((r) => r['QUERY PLAN']).join('\n'), /t_keys/);
      assert.deepEqual(await found(trx, 'mutual'), ['Mutual NDA 2026', 'Mutual consent']);
      assert.deepEqual(await found(trx, 'иван'), ['Иван Петров', 'Иванов']);
      assert.deepEqual(await found(trx, 'nda 20'), ['Mutual NDA 2026']);
    });
  });
});
