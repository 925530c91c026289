import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb } from '../db/db.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { createAuthLookup } from './auth-cache.js';
import { createKey, findKeyForAuth, hashKey, revokeKey, setAllowedIps, type AuthRow } from './keys.repo.js';

const PLAINTEXT = `svk_live_${'ab'.repeat(16)}`;

function row(hash: string, over: Partial<AuthRow> = {}): AuthRow {
  return {
    id: `key_${hash.slice(0, 8)}`,
    key_hash: hash,
    workspace_id: 'ws_1',
    revoked_at: null,
    rate_limit: null,
    allowed_ips: '[]',
    allowed_origins: '["https://app.example.com"]',
    ws_name: 'Acme',
    ws_slug: 'acme',
    ws_tier: 'business',
    ...over,
  };
}

/** A database stand-in: rows by hash, a probe version the test moves, and a count of reads. */
function fake() {
  const rows = new Map<string, AuthRow>();
  const state = { version: 1 as number | null, reads: 0 };
  const lookup = (max?: number) =>
    createAuthLookup({
      load: async (h) => {
        state.reads++;
        return rows.get(h);
      },
      probe: { version: () => state.version },
      max,
    });
  return { rows, state, lookup };
}

describe('auth lookup cache', () => {
  test('a second lookup with nothing changed is served from memory, parsed once', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(h, { allowed_ips: '["10.0.0.0/8"]' }));
    const keys = f.lookup();
    const a = await keys.load(h);
    const b = await keys.load(h);
    assert.equal(f.state.reads, 1);
    assert.equal(a, b);
    assert.equal(a!.allowIp!('10.1.2.3'), true);
    assert.equal(a!.allowIp!('192.0.2.1'), false);
    assert.deepEqual(a!.allowedOrigins, ['https://app.example.com']);
    assert.deepEqual(a!.workspace, { id: 'ws_1', name: 'Acme', slug: 'acme', tier: 'business' });
    const regional = hashKey(`${PLAINTEXT.slice(0, -1)}0`);
    f.rows.set(regional, row(regional, { ws_region: 'eu-central' }));
    assert.equal((await keys.load(regional))!.workspace.region, 'eu-central', 'the region travels with the key');
    assert.ok(
      Object.isFrozen(a) && Object.isFrozen(a!.workspace) && Object.isFrozen(a!.allowedOrigins),
      'Object.isFrozen(a) && Object.isFrozen(a!.workspace) && Object.isFrozen(a!.allowedOrigins)',
    );
  });

  test('get() answers synchronously only while the reading it is given still matches', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(h));
    const keys = f.lookup();
    assert.equal(keys.get(h, keys.version()), undefined, 'nothing read yet');
    const entry = await keys.load(h, keys.version());
    assert.equal(keys.get(h, 1), entry);
    assert.equal(keys.get(h, 2), undefined, 'another reading');
    assert.equal(keys.get(h, null), undefined, 'an unknown reading');
    assert.equal(f.state.reads, 1);
    f.state.version = null;
    assert.equal(keys.version(), null);
    assert.equal(
      createAuthLookup({ load: async () => undefined, probe: null }).version(),
      null,
      'no probe: never cacheable',
    );
  });

  test('an empty allow-list is null (unrestricted)', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(h));
    assert.equal((await f.lookup().load(h))!.allowIp, null);
  });

  test('a change seen by the probe (another connection, or our own rows) forces a read', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(h));
    const keys = f.lookup();
    assert.equal((await keys.load(h))!.revoked, false);
    f.rows.set(h, row(h, { revoked_at: 123 }));
    f.state.version = 2;
    assert.equal((await keys.load(h))!.revoked, true);
    assert.equal(f.state.reads, 2);
  });

  test("on a real SQLite file, this connection's own writes are seen with no call to the cache, failed ones change nothing", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-auth-'));
    const db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
    try {
      const ws = await createWorkspace(db.kysely, { name: 'Acme', tier: 'business' }, 1);
      const { key, plaintext } = await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, 1);
      let reads = 0;
      const keys = createAuthLookup({ load: (x) => (reads++, findKeyForAuth(db.kysely, x)), probe: db.probe });
      const h = hashKey(plaintext);
      const first = await keys.load(h);
      assert.equal(await keys.load(h), first, 'unchanged: served from memory');
      assert.equal(reads, 1);

      await setAllowedIps(db.kysely, key.id, ['10.0.0.0/8']);
      const narrowed = keys.get(h, keys.version());
      assert.equal(narrowed, undefined, 'an allowlist change on the same connection is seen at once');
      assert.equal((await keys.load(h))!.allowIp!('192.0.2.1'), false);

      const before = await keys.load(h);
      await assert.rejects(
        db.kysely
          .insertInto('api_keys')
          .values({ ...key, id: key.id })
          .execute(),
        /UNIQUE/,
      );
      assert.equal(keys.get(h, keys.version()), before, 'a write that failed wrote nothing: the entry stays exact');

      await revokeKey(db.kysely, key.id, 'test', 2);
      assert.equal((await keys.load(h))!.revoked, true, 'a revoke on the same connection is seen on the next lookup');
    } finally {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a change that races with the read leaves the entry stale, not wrongly fresh', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(h));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const keys = createAuthLookup({
      load: async (x) => {
        f.state.reads++;
        const r = f.rows.get(x);
        await gate;
        return r;
      },
      probe: { version: () => f.state.version },
    });
    const first = keys.load(h); // reads the old row
    f.rows.set(h, row(h, { revoked_at: 1 }));
    f.state.version = 2; // …and the revoke commits before that read is stored
    release();
    assert.equal((await first)!.revoked, false, 'the request already under way may see the old row');
    assert.equal((await keys.load(h))!.revoked, true, 'the next one may not');
  });

  test('no caching when the probe cannot tell (inside a transaction) or is absent (PostgreSQL)', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(h));
    f.state.version = null;
    const keys = f.lookup();
    await keys.load(h);
    await keys.load(h);
    assert.equal(f.state.reads, 2);
    assert.equal(keys.size, 0);
    let reads = 0;
    const pg = createAuthLookup({ load: async (x) => (reads++, f.rows.get(x)), probe: null });
    await pg.load(h);
    await pg.load(h);
    assert.equal(reads, 2);
  });

  test('unknown keys are not cached, and the cache is bounded', async () => {
    const f = fake();
    const keys = f.lookup(3);
    assert.equal(await keys.load(hashKey('svk_live_unknown')), undefined);
    assert.equal(keys.size, 0);
    const hashes = Array.from({ length: 5 }, (_, i) => hashKey(`svk_live_${i}`));
    for (const h of hashes) f.rows.set(h, row(h));
    for (const h of hashes) await keys.load(h);
    assert.equal(keys.size, 3);
    const reads = f.state.reads;
    await keys.load(hashes[4]!);
    assert.equal(f.state.reads, reads, 'the newest entries are kept');
    await keys.load(hashes[0]!);
    assert.equal(f.state.reads, reads + 1, 'the oldest was dropped');
  });

  test('a row whose hash does not match (constant-time check) is no key', async () => {
    const f = fake();
    const h = hashKey(PLAINTEXT);
    f.rows.set(h, row(hashKey('something else')));
    assert.equal(await f.lookup().load(h), undefined);
  });
});
