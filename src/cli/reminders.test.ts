// `signet workspace reminders`, run in a child process on the SQLite file of a running app: it shows, sets and turns
// off the workspace's default reminders (refusing values out of bounds with one line and nothing saved), writes its
// audit-log row as `cli:<login>`, and the next signing request created through the API takes the default.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { runSignet } from '../testing/child-server.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { oneErrorLine, oneJson } from './testing/cli.js';

const PDF = b64(await makePdf({ text: [['Agreement']] }));

describe('signet workspace reminders', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(() => e?.close());
  const signet = (args: string[]) => runSignet(e.h.config.dataDir, ['workspace', 'reminders', ...args]);
  const send = async () => {
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: [{ role: 'a', email: 'cli.signer@example.com', name: 'S' }],
      file: { name: 'a.pdf', content_base64: PDF },
      placement: 'auto_append',
    });
    assert.equal(r.status, 201, r.text);
    return r.json;
  };

  test('shows, sets and turns off the default; a new request takes it', async () => {
    const ws = ['--workspace', e.workspaceId];
    assert.deepEqual(oneJson(await signet([...ws, '--json']), 'show'), {
      workspace_id: e.workspaceId,
      reminders: null,
    });

    for (const [args, words] of [
      [['--after-days', '0', '--every-days', '2'], /--after-days must be a whole number from 1 to 60/],
      [['--after-days', '3', '--every-days', '31'], /--every-days must be a whole number from 1 to 30/],
      [['--after-days', '2.5', '--every-days', '2'], /--after-days must be a whole number/],
      [['--after-days', '3'], /--after-days and --every-days go together/],
      [['--off', '--after-days', '3', '--every-days', '2'], /either --off or/],
    ] as const) {
      assert.match(oneErrorLine(await signet([...ws, ...args, '--json']), args.join(' ')), words);
    }
    assert.match(
      oneErrorLine(await signet(['--workspace', 'ws_nope', '--off']), 'unknown workspace'),
      /no workspace ws_nope/,
    );
    assert.equal((await send()).reminders, null, 'refusals saved nothing');

    const set = oneJson(await signet([...ws, '--after-days', '3', '--every-days', '2', '--json']), 'set');
    assert.deepEqual(set, { workspace_id: e.workspaceId, reminders: { after_days: 3, every_days: 2 } });
    const human = await signet(ws);
    assert.equal(human.stdout, 'reminders: first after 3 days, then every 2 days\n');
    assert.deepEqual((await send()).reminders, { after_days: 3, every_days: 2 });

    const audit = await e.h.db.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'workspace.reminders_set')
      .execute();
    assert.equal(audit.length, 1);
    assert.match(audit[0]!.actor, /^cli:/);
    assert.equal(audit[0]!.workspace_id, e.workspaceId);

    assert.deepEqual(oneJson(await signet([...ws, '--off', '--json']), 'off').reminders, null);
    assert.equal((await send()).reminders, null);
  });
});
