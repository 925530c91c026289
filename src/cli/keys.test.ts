// `signet key …` in a child process against a real SQLite file: what the key commands store, print and refuse.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDb } from '../db/db.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { withAuditLogAway } from '../audit/testing/away.js';
import { ISO_MS, cliDataDir, dataDirBytes, oneErrorLine, oneJson } from './testing/cli.js';

describe('signet CLI', () => {
  const cli = cliDataDir();
  const { signet, seedKey, keyRow } = cli;

  test('key create: svk_live_/lgk_live_ shapes, label is the first 12 characters, the plaintext is stored nowhere', async () => {
    const ws = await createWorkspace(cli.db.kysely, { name: 'Keys Inc', tier: 'business' }, Date.now());
    const [cur, leg, nope] = await Promise.all([
      signet(['key', 'create', '--workspace', ws.id, '--json']),
      signet(['key', 'create', '--workspace', ws.id, '--legacy', '--json']),
      signet(['key', 'create', '--workspace', 'ws_nope', '--json']),
    ]);
    const keys = [
      { out: oneJson(cur, 'key create'), prefix: 'svk_live_' },
      { out: oneJson(leg, 'key create --legacy'), prefix: 'lgk_live_' },
    ];
    for (const { out, prefix } of keys) {
      assert.deepEqual(Object.keys(out).sort(), ['key', 'plaintext']);
      assert.deepEqual(Object.keys(out.key).sort(), ['created_at', 'id', 'label', 'workspace_id']);
      assert.match(out.plaintext, new RegExp(`^${prefix}[0-9a-f]{32}$`));
      assert.equal(out.key.label, out.plaintext.slice(0, 12));
      assert.equal(out.key.workspace_id, ws.id);
      assert.match(out.key.id, /^key_[0-9a-f]+$/);
      assert.match(out.key.created_at, ISO_MS);
    }
    assert.match(oneErrorLine(nope, 'unknown workspace'), /ws_nope/);

    // Not in any byte of the data directory (database, WAL, anything else)… The test's own connection is closed
    // while the files are read: closing any descriptor of a SQLite file drops this process's POSIX locks on it.
    await cli.db.close();
    const bytes = dataDirBytes(cli.dir);
    assert.ok(bytes.length > 0, 'bytes.length > 0');
    for (const { out } of keys) {
      assert.equal(bytes.indexOf(out.plaintext), -1, 'plaintext in the data directory');
      assert.equal(bytes.indexOf(out.plaintext.slice(12)), -1, 'secret part in the data directory');
    }
    // …and not in any column of api_keys: only its SHA-256 and its label are there.
    const sqlite = new Database(path.join(cli.dir, 'signet.db'), { readonly: true });
    try {
      for (const { out } of keys) {
        const row = sqlite.prepare('select * from api_keys where id = ?').get(out.key.id) as Record<string, unknown>;
        assert.ok(row, 'the key row exists');
        assert.equal(row.key_hash, createHash('sha256').update(out.plaintext).digest('hex'));
        assert.equal(row.label, out.plaintext.slice(0, 12));
        assert.equal(row.legacy, out.plaintext.startsWith('lgk_') ? 1 : 0);
      }
      const everything = JSON.stringify(sqlite.prepare('select * from api_keys').all());
      for (const { out } of keys)
        assert.ok(!everything.includes(out.plaintext.slice(12)), 'no column holds the secret part');
    } finally {
      sqlite.close();
      cli.db = await openDb(`sqlite:${path.join(cli.dir, 'signet.db')}`);
    }

    // key list for this workspace: label, created, last used, revoked; never the secret or its hash.
    const [listJson, listHuman] = await Promise.all([
      signet(['key', 'list', '--workspace', ws.id, '--json']),
      signet(['key', 'list', '--workspace', ws.id]),
    ]);
    const listed = oneJson(listJson, 'key list');
    assert.deepEqual(Object.keys(listed), ['keys']);
    assert.deepEqual(listed.keys.map((k: { id: string }) => k.id).sort(), keys.map((k) => k.out.key.id).sort());
    for (const { out } of keys) {
      const k = listed.keys.find((x: { id: string }) => x.id === out.key.id);
      assert.equal(k.label, out.plaintext.slice(0, 12));
      assert.equal(k.created_at, out.key.created_at);
      for (const field of ['last_used_at', 'revoked_at', 'revoked_by']) {
        assert.ok(field in k, `${field} is shown`);
        assert.equal(k[field], null);
      }
      assert.equal(k.legacy, out.plaintext.startsWith('lgk_'));
      for (const field of Object.keys(k)) assert.ok(!/hash|plaintext|secret/.test(field), `field ${field}`);
      const hash = createHash('sha256').update(out.plaintext).digest('hex');
      for (const text of [listJson.stdout, listHuman.stdout]) {
        assert.ok(!text.includes(out.plaintext.slice(12)), 'key list never prints the secret');
        assert.ok(!text.includes(hash), 'key list never prints the hash');
      }
      assert.ok(listHuman.stdout.includes(out.key.id), 'listHuman.stdout.includes(out.key.id)');
    }
    assert.equal(listHuman.code, 0);
    assert.match(listHuman.stdout, /last used never/);
  });

  test('key set-ips: canonical list; one bad entry refuses the whole save, naming it; 51 refused; --clear empties', async () => {
    const { id: keyId } = await seedKey('IPs');
    const saved = oneJson(
      await signet(['key', 'set-ips', keyId, '10.1.2.3/24', '::1', '2001:DB8::1/128', '--json']),
      'set-ips',
    );
    assert.deepEqual(saved, { key_id: keyId, allowed_ips: ['10.1.2.0/24', '::1', '2001:db8::1'] });
    const savedList = '["10.1.2.0/24","::1","2001:db8::1"]';
    assert.equal((await keyRow(keyId)).allowed_ips, savedList);

    // Each bad entry sits after a good one: the whole save is refused, and the message names the bad entry.
    // (ip.test.ts covers the parser; here each refusal only has to reach the operator by name.)
    const bad = ['10.0.0.256', '1.2.3.4/33', '::ffff:10.0.0.1/24', 'fe80::1%eth0'];
    const tooMany = Array.from({ length: 51 }, (_, i) => `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    const [fiftyOne, ...results] = await Promise.all([
      signet(['key', 'set-ips', keyId, ...tooMany, '--json']),
      ...bad.map((entry) => signet(['key', 'set-ips', keyId, '192.0.2.1', entry, '--json'])),
    ]);
    results.forEach((r, i) => {
      const line = oneErrorLine(r, `set-ips ${JSON.stringify(bad[i])}`);
      assert.ok(line.includes(`"${bad[i]}"`), `the message names the entry: ${line}`);
    });
    assert.match(oneErrorLine(fiftyOne!, '51 entries'), /50/);
    assert.equal((await keyRow(keyId)).allowed_ips, savedList, 'every refusal left the previous list in place');

    assert.deepEqual(oneJson(await signet(['key', 'set-ips', keyId, '--clear', '--json']), 'set-ips --clear'), {
      key_id: keyId,
      allowed_ips: [],
    });
    assert.equal((await keyRow(keyId)).allowed_ips, '[]');
  });

  test('key set-origins: plain https origins only; http, path, query and wildcard are refused by name', async () => {
    const { id: keyId } = await seedKey('Origins');
    const ok = oneJson(
      await signet([
        'key',
        'set-origins',
        keyId,
        'https://app.example.com',
        'HTTPS://Embed.Example.com:443/',
        '--json',
      ]),
      'set-origins',
    );
    assert.deepEqual(ok, { key_id: keyId, allowed_origins: ['https://app.example.com', 'https://embed.example.com'] });
    const bad = [
      'http://app.example.com',
      'https://app.example.com/path',
      'https://app.example.com/?q=1',
      'https://*.example.com',
    ];
    const results = await Promise.all(
      bad.map((o) => signet(['key', 'set-origins', keyId, 'https://ok.example.com', o, '--json'])),
    );
    results.forEach((r, i) => {
      const line = oneErrorLine(r, `set-origins ${bad[i]}`);
      assert.ok(line.includes(`"${bad[i]}"`), `the message names the origin: ${line}`);
    });
    assert.equal(
      (await keyRow(keyId)).allowed_origins,
      '["https://app.example.com","https://embed.example.com"]',
      'refusals saved nothing',
    );
  });

  test('key set-limit: the limit and its audit row commit together, or neither does', async () => {
    const { ws, id } = await seedKey('Limits');
    const refused = await withAuditLogAway(cli.db.kysely, () => signet(['key', 'set-limit', id, '7', '--json']));
    oneErrorLine(refused, 'set-limit while audit_log is away');
    assert.equal((await keyRow(id)).rate_limit, null, 'no limit without its audit row');
    const ok = oneJson(await signet(['key', 'set-limit', id, '7', '--json']), 'set-limit');
    assert.deepEqual(ok, { key_id: id, rate_limit: 7 });
    assert.equal((await keyRow(id)).rate_limit, 7);
    const rows = await cli.db.kysely
      .selectFrom('audit_log')
      .select(['actor', 'action', 'target_id', 'detail'])
      .where('workspace_id', '=', ws.id)
      .execute();
    const actor = `cli:${os.userInfo().username}`;
    assert.deepEqual(rows, [{ actor, action: 'key.limit_set', target_id: id, detail: '7' }]);
  });
});
