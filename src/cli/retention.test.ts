// `signet workspace update WS_ID --retention-days N|off`, in a child process on a SQLite file: it sets and clears the
// workspace's retention (what the purge-documents job applies), refuses values out of bounds with one line and
// nothing saved, and writes its audit-log row as `cli:<login>`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDataDir, oneErrorLine, oneJson } from './testing/cli.js';
import { createWorkspace, findWorkspace } from '../workspaces/workspaces.repo.js';

describe('signet workspace update --retention-days', () => {
  const cli = cliDataDir();

  test('sets, refuses and clears the retention, with an audit row each time it changes', async () => {
    const ws = await createWorkspace(cli.db.kysely, { name: 'Retained', tier: 'business' }, Date.now());
    const update = (...args: string[]) => cli.signet(['workspace', 'update', ws.id, ...args]);
    const set = oneJson(await update('--retention-days', '30', '--json'), 'set');
    assert.equal(set.workspace_id, ws.id);
    assert.equal(set.retention_days, 30);
    assert.match(oneErrorLine(await update('--retention-days', '0'), 'zero'), /whole number from 1 to 36500, or off/);
    assert.equal(Number((await findWorkspace(cli.db.kysely, ws.id))?.retention_days), 30, 'the refusal saved nothing');
    assert.match((await update('--retention-days', 'off')).stdout, /^retention: keep for ever$/m);
    assert.equal((await findWorkspace(cli.db.kysely, ws.id))?.retention_days, null);
    assert.match(
      oneErrorLine(await cli.signet(['workspace', 'update', 'ws_nope', '--retention-days', '3']), 'unknown'),
      /no workspace ws_nope/,
    );
    const audit = await cli.db.kysely
      .selectFrom('audit_log')
      .select(['actor', 'detail'])
      .where('workspace_id', '=', ws.id)
      .where('action', '=', 'workspace.retention_set')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      audit.map((r) => JSON.parse(r.detail!)),
      [{ retention_days: 30 }, { retention_days: null }],
    );
    assert.ok(
      audit.every((r) => r.actor.startsWith('cli:')),
      'the actor is the CLI user',
    );
  });
});
