// `signet workspace update WS_ID --locale TAG|none`, in child processes on a SQLite file: it sets and clears the
// workspace's default language with a `workspace.locale_set` audit row as `cli:<login>`, prints it (`--json`:
// `default_locale`), refuses an unknown tag with one line naming the known ones and nothing saved, and on a database
// before migration 023 says which migration it needs. Then through the real app: a change made by the command (another
// process) is what the very next API request naming no locale is sent in, though the key's workspace was cached.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { runSignet } from '../testing/child-server.js';
import { b64, startE2E } from '../testing/e2e.js';
import { createWorkspace, findWorkspace } from '../workspaces/workspaces.repo.js';
import { cliDataDir, oneErrorLine, oneJson } from './testing/cli.js';

const KNOWN = 'en, de, fr, es, it, nl, pt, pl, sv, ja, ar';

describe('signet workspace update --locale', () => {
  const cli = cliDataDir();

  test('sets, refuses and clears the default language, with an audit row each time', async () => {
    const ws = await createWorkspace(cli.db.kysely, { name: 'Polyglot', tier: 'business' }, Date.now());
    const update = (...args: string[]) => cli.signet(['workspace', 'update', ws.id, ...args]);
    const set = oneJson(await update('--locale', 'de', '--json'), 'set');
    assert.equal(set.workspace_id, ws.id);
    assert.equal(set.default_locale, 'de');
    assert.equal((await findWorkspace(cli.db.kysely, ws.id))?.default_locale, 'de');

    for (const tag of ['xx', 'de-DE', 'DE', '']) {
      const line = oneErrorLine(await update('--locale', tag), `--locale ${JSON.stringify(tag)}`);
      assert.equal(line, `signet: --locale must be one of ${KNOWN}, or none`);
    }
    // A good change beside the refused tag is not saved either.
    oneErrorLine(await update('--name', 'Renamed', '--locale', 'klingon'), 'with a name');
    const kept = (await findWorkspace(cli.db.kysely, ws.id))!;
    assert.deepEqual([kept.default_locale, kept.name], ['de', 'Polyglot'], 'the refusals saved nothing');

    const shown = await update('--name', 'Polyglot Ltd');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^language: de$/m, 'a change of something else shows the language');
    const cleared = await update('--locale', 'none');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout, /^language: none \(English\)$/m);
    assert.equal((await findWorkspace(cli.db.kysely, ws.id))?.default_locale, null);

    const audit = await cli.db.kysely
      .selectFrom('audit_log')
      .select(['actor', 'detail'])
      .where('workspace_id', '=', ws.id)
      .where('action', '=', 'workspace.locale_set')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      audit.map((a) => JSON.parse(a.detail!)),
      [{ locale: 'de' }, { locale: null }],
    );
    assert.ok(
      audit.every((a) => a.actor.startsWith('cli:')),
      'the actor is the CLI user',
    );
    assert.match(
      oneErrorLine(await cli.signet(['workspace', 'update', 'ws_nope', '--locale', 'de']), 'unknown'),
      /no workspace ws_nope/,
    );
  });
});

describe('signet workspace update --locale on a database before migration 023 (SIGNET_AUTO_MIGRATE=0)', () => {
  test('one line naming the migration; nothing else changed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-locale-old-'));
    try {
      const url = `sqlite:${path.join(dir, 'signet.db')}`;
      const db = await openDb(url, { migrate: false });
      await migrateToLatest(db, '022-workspace-face');
      const ws = await createWorkspace(db.kysely, { name: 'Old', tier: 'business' }, Date.now());
      await db.close();
      const r = await runSignet(dir, ['workspace', 'update', ws.id, '--locale', 'de'], {
        DATABASE_URL: url,
        SIGNET_AUTO_MIGRATE: '0',
      });
      assert.equal(
        oneErrorLine(r, 'old'),
        'signet: --locale needs migration 023-default-locale; run signet migrate first',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a default set by signet workspace update reaches the next API request', () => {
  test('the key’s workspace was cached in English; the next request naming no locale is German', async () => {
    const e = await startE2E();
    try {
      const send = async () => {
        const r = await e.api('POST', '/v1/signing-requests', {
          signers: [{ role: 'a', email: 'someone@example.com', name: 'S' }],
          file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Agreement']] })) },
          placement: 'auto_append',
        });
        assert.equal(r.status, 201, r.text);
        await e.work();
        return e.eventsOf('signing_request.sent', r.json.document_id)[0]!.locale;
      };
      assert.equal(await send(), 'en');
      const r = await runSignet(e.h.config.dataDir, ['workspace', 'update', e.workspaceId, '--locale', 'de']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await send(), 'de');
    } finally {
      await e.close();
    }
  });
});
