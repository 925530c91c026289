// A batch of rows read back as a table on both databases: every cell as written (quotes, backslashes, JSON's own
// characters, non-Latin text, NULL, integers up to 2^53), and one statement text whatever the batch's size.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDb, type Db } from './db.js';
import { batchRows, keyedIn, type BatchColumn } from './batch-rows.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';

const COLUMNS: BatchColumn[] = [
  ['id', 'text'],
  ['n', 'integer'],
  ['at', 'bigint'],
  ['note', 'text'],
];
const ROWS = [
  ['a', 1, 1_733_190_000_000, `it's "quoted" \\ back\\slash {braces}, [brackets]`],
  ['b', -7, 2 ** 53 - 1, null],
  ['c', null, 0, 'Łódź · 東京 · تجربة · 🙂'],
  ['d', 0, null, ''],
];

const pg = await postgresForTests();
const databases: { name: string; skip: string | false; open(): Promise<{ db: Db; close(): Promise<void> }> }[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const db = await openDb('sqlite::memory:', { migrate: false });
      return { db, close: () => db.close() };
    },
  },
  {
    name: 'PostgreSQL',
    skip: 'skip' in pg ? pg.skip : false,
    async open() {
      const fresh = await freshPostgres((pg as { url: string }).url);
      return { db: fresh.db, close: () => fresh.drop() };
    },
  },
];

for (const d of databases) {
  describe(`a batch of rows as a table (${d.name})`, { skip: d.skip }, () => {
    let h: Awaited<ReturnType<(typeof d)['open']>>;
    before(async () => {
      h = await d.open();
    });
    after(() => h?.close());

    test('every cell reads back as written, with its type', async () => {
      const r = await sql<
        Record<string, unknown>
      >`SELECT * FROM ${batchRows(h.db.kysely, COLUMNS, ROWS)} ORDER BY id`.execute(h.db.kysely);
      // PostgreSQL's driver returns bigint as text; compare as numbers.
      const rows = r.rows.map((x) => [x.id, x.n, x.at === null ? null : Number(x.at), x.note]);
      assert.deepEqual(rows, ROWS);
    });

    test('one statement text for one row or four hundred', () => {
      const text = (n: number) =>
        sql`SELECT * FROM ${batchRows(
          h.db.kysely,
          COLUMNS,
          Array.from({ length: n }, () => ROWS[0]!),
        )}`.compile(h.db.kysely);
      const one = text(1);
      const many = text(400);
      assert.equal(one.sql, many.sql);
      assert.ok(many.parameters.length <= COLUMNS.length, `${many.parameters.length} parameters`);
    });

    test('a lone surrogate is stored as U+FFFD; the rest of the batch as written', async () => {
      const rows = [
        ['a', 1, 1, 'half a pair: \ud83d, then text'],
        ['b', 2, 2, 'a whole pair: 🙂 and a literal \\ud83d'],
      ];
      const r = await sql<
        Record<string, unknown>
      >`SELECT id, note FROM ${batchRows(h.db.kysely, COLUMNS, rows)} ORDER BY id`.execute(h.db.kysely);
      assert.deepEqual(
        r.rows.map((x) => x.note),
        ['half a pair: \ufffd, then text', 'a whole pair: 🙂 and a literal \\ud83d'],
      );
    });

    test('keyed rows: a row matches when its key is among the batch with the same counter', async () => {
      await sql`CREATE TABLE keyed (id text PRIMARY KEY, n integer NOT NULL)`.execute(h.db.kysely);
      const ids = [`it's "q" \\ {x}`, 'Łódź · 東京', 'plain', 'absent'];
      for (const [i, id] of ids.slice(0, 3).entries()) {
        await sql`INSERT INTO keyed (id, n) VALUES (${id}, ${i})`.execute(h.db.kysely);
      }
      const batch: [string, number][] = [
        [ids[0]!, 0],
        [ids[1]!, 5],
        [ids[2]!, 2],
        [ids[3]!, 3],
      ];
      const r = await sql<{ id: string }>`SELECT id FROM keyed WHERE ${keyedIn(h.db.kysely, ['id', 'n'], batch)}
        ORDER BY id`.execute(h.db.kysely);
      assert.deepEqual(r.rows.map((x) => x.id).sort(), [ids[0], ids[2]].sort(), 'the second has another counter');
      assert.throws(() => keyedIn(h.db.kysely, ['id', 'n'], [['a', 1.5]]), /not an integer/);
    });

    test('a name that is not a plain identifier is refused', () => {
      assert.throws(() => batchRows(h.db.kysely, [['id; drop table x', 'text']], []), /bad name/);
    });
  });
}
