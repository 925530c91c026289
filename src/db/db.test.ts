import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { STATEMENT_CACHE_SIZE, cachingPrepare, openDb, type Db } from './db.js';

describe('SQLite statement cache', () => {
  test('the same SQL gets the same prepared statement; other SQL gets its own', () => {
    const sqlite = new Database(':memory:');
    try {
      const db = cachingPrepare(sqlite);
      const a = db.prepare('select 1 as n');
      assert.equal(db.prepare('select 1 as n'), a);
      assert.notEqual(db.prepare('select 2 as n'), a);
      assert.deepEqual(a.all([]), [{ n: 1 }]);
    } finally {
      sqlite.close();
    }
  });

  test('bounded: the least recently used statement is dropped first', () => {
    const sqlite = new Database(':memory:');
    try {
      const db = cachingPrepare(sqlite, 3);
      const a = db.prepare('select 1');
      const b = db.prepare('select 2');
      db.prepare('select 3');
      assert.equal(db.prepare('select 1'), a, 'a is now the most recently used');
      db.prepare('select 4'); // evicts b
      assert.equal(db.prepare('select 1'), a);
      assert.notEqual(db.prepare('select 2'), b, 'b was evicted and is prepared afresh');
    } finally {
      sqlite.close();
    }
  });

  test('a statement busy in an iteration is not handed out again', () => {
    const sqlite = new Database(':memory:');
    try {
      const db = cachingPrepare(sqlite);
      sqlite.exec('create table t (n integer); insert into t values (1), (2), (3)');
      const s = db.prepare('select n from t order by n');
      const it = s.iterate([]);
      assert.deepEqual(it.next().value, { n: 1 });
      const other = db.prepare('select n from t order by n');
      assert.notEqual(other, s);
      it.return!();
      assert.equal(db.prepare('select n from t order by n'), s, 'cached one again once the iteration is done');
    } finally {
      sqlite.close();
    }
  });
});

test('every successful run of a statement that can write is counted; reads and failed writes are not', () => {
  const sqlite = new Database(':memory:');
  try {
    let writes = 0;
    const db = cachingPrepare(sqlite, 10, () => void writes++);
    sqlite.exec('create table t (n integer primary key)');
    db.prepare('insert into t values (?)').run([1]);
    db.prepare('insert into t values (?)').run([2]);
    assert.equal(writes, 2);
    assert.deepEqual(db.prepare('select n from t order by n').all([]), [{ n: 1 }, { n: 2 }]);
    assert.throws(() => db.prepare('insert into t values (?)').run([1]), /UNIQUE/);
    assert.equal(writes, 2, 'reads and a refused insert: no count');
    assert.deepEqual(db.prepare('delete from t where n = ? returning n').all([2]), [{ n: 2 }]);
    assert.equal(writes, 3, 'a write that returns rows counts too');
    assert.equal(db.prepare('insert into t values (?)').reader, false);
    assert.equal(db.prepare('insert into t values (?)'), db.prepare('insert into t values (?)'), 'still cached');
  } finally {
    sqlite.close();
  }
});

describe('SQLite through Kysely with the statement cache', () => {
  let dir: string;
  let db: Db;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-db-'));
    db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  });
  after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('many more distinct queries than the cache holds, interleaved with repeats, all answer correctly', async () => {
    const distinct = STATEMENT_CACHE_SIZE * 2 + 37;
    for (let i = 0; i < distinct; i++) {
      const r = await sql<{ n: number; p: number }>`select ${sql.lit(i)} as n, ${i * 2} as p`.execute(db.kysely);
      assert.deepEqual(r.rows, [{ n: i, p: i * 2 }]);
      if (i % 7 === 0) {
        const again = await sql<{ n: number; p: string }>`select 1 as n, ${`x${i}`} as p`.execute(db.kysely);
        assert.deepEqual(again.rows, [{ n: 1, p: `x${i}` }]);
      }
    }
  });

  test('writes, transactions and a rolled-back transaction behave as without a cache', async () => {
    await sql`create table cache_t (id integer primary key, v text not null)`.execute(db.kysely);
    const insert = (id: number, v: string) => sql`insert into cache_t (id, v) values (${id}, ${v})`.execute(db.kysely);
    await insert(1, 'a');
    await insert(2, 'b');
    await assert.rejects(insert(1, 'dup'), (e: { code?: string }) => e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY');
    await db.kysely.transaction().execute(async (trx) => {
      await sql`insert into cache_t (id, v) values (${3}, ${'c'})`.execute(trx);
    });
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await sql`insert into cache_t (id, v) values (${4}, ${'d'})`.execute(trx);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    const rows = await sql<{ id: number; v: string }>`select id, v from cache_t order by id`.execute(db.kysely);
    assert.deepEqual(rows.rows, [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ]);
  });

  test('a stream abandoned half-way leaves its statement reusable', async () => {
    const q = () => (db.kysely as unknown as Kysely<any>).selectFrom('cache_t').select('id').orderBy('id');
    for await (const row of q().stream()) {
      assert.equal(row.id, 1);
      break;
    }
    assert.deepEqual(await q().execute(), [{ id: 1 }, { id: 2 }, { id: 3 }]);
    const seen: number[] = [];
    for await (const row of q().stream()) seen.push(row.id);
    assert.deepEqual(seen, [1, 2, 3]);
  });
});

describe('SQLite change probe', () => {
  let dir: string;
  let file: string;
  let db: Db;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-probe-'));
    file = path.join(dir, 'signet.db');
    db = await openDb(`sqlite:${file}`);
    await sql`create table probe_t (v integer)`.execute(db.kysely);
  });
  after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('stays put while nothing is written', () => {
    const probe = db.probe!;
    const v = probe.version();
    assert.equal(typeof v, 'number');
    assert.equal(probe.version(), v);
    assert.equal(probe.version(), v);
  });

  test('moves on a commit by a second connection to the same file', () => {
    const probe = db.probe!;
    const v = probe.version();
    const other = new Database(file);
    try {
      other.prepare('insert into probe_t (v) values (1)').run();
    } finally {
      other.close();
    }
    const w = probe.version();
    assert.notEqual(w, v);
    assert.equal(probe.version(), w);
  });

  test("moves on this connection's own writes, which its data_version does not show", async () => {
    const probe = db.probe!;
    // The same connection's data_version: unchanged by its own commits (SQLite documents this), hence total_changes.
    const dv = async () =>
      (await sql<{ data_version: number }>`pragma data_version`.execute(db.kysely)).rows[0]!.data_version;
    const v = probe.version();
    const before = await dv();
    await sql`insert into probe_t (v) values (2)`.execute(db.kysely);
    assert.equal(await dv(), before);
    assert.notEqual(probe.version(), v);
  });

  test('is null inside a transaction on this connection, and moves after it', async () => {
    const probe = db.probe!;
    const v = probe.version();
    await db.kysely.transaction().execute(async (trx) => {
      await sql`insert into probe_t (v) values (3)`.execute(trx);
      assert.equal(probe.version(), null);
    });
    const w = probe.version();
    assert.equal(typeof w, 'number');
    assert.notEqual(w, v);
  });

  test('a statement that fails writes nothing and leaves the reading; a rolled-back write moves it', async () => {
    await sql`create unique index if not exists probe_t_v on probe_t (v)`.execute(db.kysely);
    const probe = db.probe!;
    await sql`insert into probe_t (v) values (100)`.execute(db.kysely);
    const v = probe.version();
    await assert.rejects(sql`insert into probe_t (v) values (100)`.execute(db.kysely), /UNIQUE/);
    assert.equal(probe.version(), v, 'nothing was written, so nothing cached can be stale');
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await sql`insert into probe_t (v) values (101)`.execute(trx);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.notEqual(probe.version(), v, 'a rolled-back write still moves it: at worst a needless re-read');
  });
});
