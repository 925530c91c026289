// `signet backup` under load and `signet restore` into a fresh DATA_DIR: the restored server serves every document of
// the snapshot, each sealed PDF verifies on it, each audit chain verifies, and the counts are the snapshot's. A
// truncated or altered archive is refused with one line by the real command and leaves DATA_DIR empty.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { loadConfig } from '../config.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { systemClock } from '../lib/clock.js';
import { createMemoryLimiter } from '../ratelimit/ratelimit.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { startHarness } from '../testing/harness.js';
import { loadOrCreatePki } from '../pki/pki.js';
import { postgresForTests } from '../testing/services.js';
import { runSignet } from '../testing/child-server.js';
import { oneErrorLine, oneJson } from '../cli/testing/cli.js';
import { completeDocument } from '../signing/testing/complete.js';
import { plainPdf, signers } from '../signing/testing/requests.js';
import { runBackup } from './backup.js';
import { runRestore } from './restore.js';
import { COUNTED_TABLES } from './backup.repo.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-backup-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A server (in this process, on a loopback port) on the restored DATA_DIR. */
async function serveRestored(dataDir: string) {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SIGNET_ALLOW_PRIVATE_NETWORK: '1' });
  const runtime: Runtime = await createRuntime(config, {
    api: true,
    worker: false,
    clock: systemClock,
    limiter: createMemoryLimiter({ clock: systemClock }),
    logger: false,
  });
  await runtime.app!.listen({ port: 0, host: '127.0.0.1' });
  const { port } = runtime.app!.server.address() as { port: number };
  const call = async (method: string, p: string, token: string, body?: Buffer) => {
    const res = await request(`http://127.0.0.1:${port}${p}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/pdf' } : {}) },
      body,
    });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const json = res.headers['content-type']?.toString().startsWith('application/json')
      ? JSON.parse(bytes.toString())
      : undefined;
    return { status: res.statusCode, bytes, json };
  };
  return { runtime, call, close: () => runtime.close() };
}

describe('backup and restore on SQLite', () => {
  let e: E2E;
  let archive = '';
  before(async () => {
    e = await startE2E();
  });
  after(async () => {
    await e?.close();
  });

  test('a backup taken while documents are created and signed restores to a server that serves and verifies them all', async (t) => {
    const sealedBefore = [await completeDocument(e, { signers: 2 })];
    const createdBefore = sealedBefore.map((c) => c.documentId);
    // The load: documents created, and every other one signed to its seal, through the real routes.
    let stop = false;
    let backupDone = false;
    let backupRunning = false;
    let writesDuringBackup = 0;
    const createdAfter: string[] = [];
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const people = signers(1);
        const r = await e.api('POST', '/v1/signing-requests', {
          signers: people,
          file: { name: 'load.pdf', content_base64: await plainPdf(1) },
          placement: 'auto_append',
          title: `Load ${i}`,
        });
        assert.equal(r.status, 201, r.text);
        if (backupRunning) writesDuringBackup++;
        if (!backupRunning && backupDone) createdAfter.push(r.json.document_id as string);
        await e.work();
        if (i % 2 === 0) {
          const token = await e.linkFor(people[0]!.email);
          await e.h.request('POST', `/sign/${token}/view`);
          const s = await e.h.request('POST', `/sign/${token}/sign`, {
            body: { signature: { type: 'typed', text: 'L' } },
          });
          assert.equal(s.status, 200, s.text);
          if (backupRunning) writesDuringBackup++;
          await e.work();
        }
      }
    })();
    // Backups until one overlapped a write the server finished (a small database is copied in milliseconds).
    archive = path.join(tmp, 'signet.tar.gz');
    let summary: Awaited<ReturnType<typeof runBackup>> | undefined;
    for (let attempt = 0; writesDuringBackup === 0; attempt++) {
      assert.ok(attempt < 20, 'no backup overlapped a write');
      fs.rmSync(archive, { force: true });
      await Promise.race([load, new Promise((r) => setTimeout(r, 30))]);
      backupRunning = true;
      summary = await runBackup({
        dataDir: e.h.config.dataDir,
        databaseUrl: e.h.config.databaseUrl,
        to: archive,
        clock: e.h.clock,
      });
      backupRunning = false;
    }
    backupDone = true;
    // A failing load rejects `load`, which ends this wait too.
    while (createdAfter.length < 1) await Promise.race([load, new Promise((r) => setTimeout(r, 20))]);
    stop = true;
    await load;
    summary = summary!;
    assert.equal(summary.database, 'sqlite');
    assert.ok(summary.counts!.documents >= createdBefore.length, JSON.stringify(summary.counts));
    assert.ok(summary.blobs > 0 && summary.pki_files === 6, JSON.stringify(summary));
    assert.deepEqual(summary.not_covered, []);
    // The live database's own files are not "left out": only what the server does not read would be.
    assert.deepEqual(summary.skipped, []);

    const restoredDir = path.join(tmp, 'restored');
    fs.mkdirSync(restoredDir);
    const restored = await runRestore({
      archive,
      dataDir: restoredDir,
      databaseUrl: `sqlite:${path.join(restoredDir, 'signet.db')}`,
    });
    assert.deepEqual(restored.counts, summary.counts);
    assert.deepEqual(
      fs.readdirSync(restoredDir).sort(),
      ['blobs', 'pki', 'signet.db'],
      'nothing else, no staging folder',
    );
    assert.deepEqual(
      fs.readdirSync(tmp).filter((n) => n.startsWith('.')),
      [],
      'no temp folder is left beside DATA_DIR',
    );

    const server = await serveRestored(restoredDir);
    try {
      const db = server.runtime.db.kysely;
      const counts = Object.fromEntries(
        await Promise.all(
          COUNTED_TABLES.map(async (t) => [
            t,
            Number(
              (
                await db
                  .selectFrom(t)
                  .select((x) => x.fn.countAll().as('n'))
                  .executeTakeFirstOrThrow()
              ).n,
            ),
          ]),
        ),
      );
      assert.deepEqual(counts, summary.counts, 'the restored database holds what the snapshot held');
      const docs = await db.selectFrom('documents').select(['id', 'status', 'signed_blob']).execute();
      for (const id of createdBefore)
        assert.ok(
          docs.some((d) => d.id === id),
          `${id} (made before the backup)`,
        );
      for (const id of createdAfter) {
        assert.equal((await server.call('GET', `/v1/documents/${id}`, e.token)).status, 404, `${id} came after`);
      }
      let sealed = 0;
      for (const d of docs) {
        const doc = await server.call('GET', `/v1/documents/${d.id}`, e.token);
        assert.equal(doc.status, 200, `${d.id}: ${doc.bytes.toString()}`);
        const trail = await server.call('GET', `/v1/documents/${d.id}/audit-trail`, e.token);
        assert.equal(trail.status, 200);
        assert.equal(trail.json.chain_valid, true, `${d.id}'s audit chain`);
        if (d.status !== 'completed' || !d.signed_blob) continue;
        sealed++;
        const pdf = await server.call('GET', `/v1/documents/${d.id}/signed`, e.token);
        assert.equal(pdf.status, 200);
        const v = await server.call('POST', '/v1/verifications', e.token, pdf.bytes);
        assert.equal(v.status, 200, pdf.bytes.subarray(0, 200).toString());
        assert.equal(v.json.verification.verdict, 'valid', JSON.stringify(v.json.verification.problems));
        assert.equal(v.json.verification.document.id, d.id);
        assert.equal(v.json.verification.document.audit_chain_valid, true);
      }
      assert.ok(sealed >= sealedBefore.length, `${sealed} sealed documents verified`);
      const first = await server.call('GET', `/v1/documents/${sealedBefore[0]!.documentId}/signed`, e.token);
      assert.deepEqual(new Uint8Array(first.bytes), sealedBefore[0]!.pdf, 'the sealed PDF is byte for byte the same');
    } finally {
      await server.close();
    }
    t.diagnostic(`writes during the backup: ${writesDuringBackup}`);
  });

  test('a truncated archive and one with a flipped byte are refused with one line; DATA_DIR stays empty', async () => {
    const bytes = fs.readFileSync(archive);
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(bytes.length / 2)]! ^= 0x01;
    const cases = { truncated: bytes.subarray(0, Math.floor(bytes.length * 0.7)), flipped };
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    for (const [name, b] of Object.entries(cases)) {
      const file = path.join(tmp, `${name.replaceAll(' ', '-')}.tar.gz`);
      fs.writeFileSync(file, b);
      const r = await runSignet(empty, ['restore', file]);
      const line = oneErrorLine(r, name);
      assert.equal(r.code, 1, name);
      assert.match(line, /^signet: restore refused: .*(damaged|truncated|ends early).*nothing was restored$/, line);
      assert.deepEqual(fs.readdirSync(empty), [], `${name}: DATA_DIR stays empty`);
      assert.deepEqual(
        fs.readdirSync(tmp).filter((n) => n.startsWith('.')),
        [],
        `${name}: no temp folder is left`,
      );
    }
    // The same in this process (quicker): cut inside the manifest, and an absent DATA_DIR.
    const cut = path.join(tmp, 'cut.tar.gz');
    fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 30));
    const absent = path.join(tmp, 'absent');
    await assert.rejects(runRestore({ archive: cut, dataDir: absent, databaseUrl: `sqlite:${absent}/signet.db` }), {
      message: /nothing was restored$/,
    });
    assert.equal(fs.existsSync(absent), false);
    // An absent DATA_DIR is made by the restore (one rename of the folder beside it).
    const fresh = path.join(tmp, 'fresh');
    const r = await runRestore({ archive, dataDir: fresh, databaseUrl: `sqlite:${fresh}/signet.db` });
    assert.ok(r.entries > 7, `${r.entries} entries`);
    assert.deepEqual(fs.readdirSync(fresh).sort(), ['blobs', 'pki', 'signet.db']);
    assert.deepEqual(
      fs.readdirSync(tmp).filter((n) => n.startsWith('.')),
      [],
    );
    // A non-empty DATA_DIR is refused before the archive is read.
    fs.writeFileSync(path.join(empty, 'keep'), 'x');
    await assert.rejects(runRestore({ archive, dataDir: empty, databaseUrl: `sqlite:${empty}/signet.db` }), {
      message: /is not empty/,
    });
    assert.deepEqual(fs.readdirSync(empty), ['keep']);
  });
  test('signet backup --json: one object with the snapshot’s counts; an existing target is refused with one line', async () => {
    const to = path.join(tmp, 'cli.tar.gz');
    const out = oneJson(await runSignet(e.h.config.dataDir, ['backup', '--to', to, '--json']), 'backup');
    assert.equal(out.file, to);
    assert.equal(out.database, 'sqlite');
    assert.ok(out.counts.documents > 0 && out.pki_files === 6, JSON.stringify(out));
    const again = oneErrorLine(await runSignet(e.h.config.dataDir, ['backup', '--to', to]), 'again');
    assert.equal(again, `signet: backup failed: ${to} already exists`);
  });

  test('a blob the snapshot names that is gone fails the backup (after fresh snapshots) and leaves no file', async () => {
    const { signed_blob } = await e.h.db.kysely
      .selectFrom('documents')
      .select('signed_blob')
      .where('signed_blob', 'is not', null)
      .executeTakeFirstOrThrow();
    fs.rmSync(path.join(e.h.config.dataDir, 'blobs', signed_blob!));
    const to = path.join(tmp, 'gone', 'b.tar.gz');
    await assert.rejects(
      runBackup({ dataDir: e.h.config.dataDir, databaseUrl: e.h.config.databaseUrl, to, clock: e.h.clock }),
      { message: `blobs/${signed_blob} was deleted before it could be copied` },
    );
    assert.deepEqual(fs.readdirSync(path.dirname(to)), [], 'no archive, no partial file, no work folder');
  });
});

describe('backup on PostgreSQL: the PKI only, and what pg_dump must cover', async () => {
  const pg = await postgresForTests();
  test('the archive holds the PKI; the database is named as pg_dump’s', { skip: 'skip' in pg && pg.skip }, async () => {
    const h = await startHarness({ database: { postgresAdminUrl: (pg as { url: string }).url } });
    try {
      await h.runtime.blobs.put(new Uint8Array([1, 2, 3]), 'original');
      assert.equal(fs.existsSync(path.join(h.config.dataDir, 'blobs')), false, 'blobs are rows of the database');
      await loadOrCreatePki({ dataDir: h.config.dataDir, clock: h.clock });
      const url = 'postgres://backup-test@127.0.0.1:5432/unused';
      const to = path.join(tmp, 'pg.tar.gz');
      const s = await runBackup({ dataDir: h.config.dataDir, databaseUrl: url, to, clock: h.clock });
      assert.equal(s.database, 'postgres');
      assert.equal(s.counts, null);
      assert.equal(s.blobs, 0, 'blobs are rows of the database');
      assert.equal(s.pki_files, 6);
      assert.match(s.not_covered.join(' '), /pg_dump --format=custom/);
      const into = path.join(tmp, 'pg-restored');
      const r = await runRestore({ archive: to, dataDir: into, databaseUrl: url });
      assert.match(r.not_covered.join(' '), /pg_restore/);
      for (const f of ['ca.crt', 'ca.key', 'seal.crt', 'seal.key', 'tsa.crt', 'tsa.key'])
        assert.deepEqual(
          fs.readFileSync(path.join(into, 'pki', f)),
          fs.readFileSync(path.join(h.config.dataDir, 'pki', f)),
          f,
        );
      const sqliteDir = path.join(tmp, 'pg-into-sqlite');
      const refused = runRestore({ archive: to, dataDir: sqliteDir, databaseUrl: `sqlite:${sqliteDir}/signet.db` });
      await assert.rejects(refused, /the archive is from PostgreSQL .*; nothing was restored$/);
      assert.equal(fs.existsSync(sqliteDir), false);
    } finally {
      await h.close();
    }
  });
});
