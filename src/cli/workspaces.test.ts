// `signet workspace create` and `user create`, run in a child process against a real SQLite file.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { cliDataDir, oneErrorLine, oneJson } from './testing/cli.js';

describe('signet CLI', () => {
  const cli = cliDataDir();
  const { signet } = cli;

  test('workspace create prints exactly {workspace: {id, name, slug, tier}}', async () => {
    const [plain, ent] = await Promise.all([
      signet(['workspace', 'create', '--name', 'Acme Corp', '--json']),
      signet(['workspace', 'create', '--name', 'Ærøskøbing Ünïcode', '--tier', 'enterprise', '--json']),
    ]);
    const a = oneJson(plain, 'workspace create');
    assert.deepEqual(Object.keys(a), ['workspace']);
    assert.deepEqual(Object.keys(a.workspace).sort(), ['id', 'name', 'slug', 'tier']);
    assert.match(a.workspace.id, /^ws_[0-9a-f]+$/);
    assert.equal(a.workspace.name, 'Acme Corp');
    assert.equal(a.workspace.slug, 'acme-corp');
    assert.equal(a.workspace.tier, 'starter', 'starter is the default tier');
    const b = oneJson(ent, 'workspace create --tier enterprise');
    assert.deepEqual(Object.keys(b.workspace).sort(), ['id', 'name', 'slug', 'tier']);
    assert.equal(b.workspace.name, 'Ærøskøbing Ünïcode');
    assert.match(b.workspace.slug, /^[a-z0-9-]+$/);
    assert.equal(b.workspace.tier, 'enterprise');
  });

  test('workspace create refuses a bad tier or a missing name with one line on stderr', async () => {
    const [gold, missing] = await Promise.all([
      signet(['workspace', 'create', '--name', 'X', '--tier', 'gold', '--json']),
      signet(['workspace', 'create', '--json']),
    ]);
    assert.match(oneErrorLine(gold, 'bad tier'), /tier/);
    assert.match(oneErrorLine(missing, 'missing --name'), /name/);
  });

  test('user create: a one-time set-password link for the first owner; bad role, e-mail or workspace refused', async () => {
    const ws = await createWorkspace(cli.db.kysely, { name: 'People', tier: 'business' }, Date.now());
    const out = oneJson(
      await signet(['user', 'create', '--email', 'Ada@Example.com', '--workspace', ws.id, '--json']),
      'user create',
    );
    assert.deepEqual(Object.keys(out).sort(), ['expires_at', 'set_password_url', 'user']);
    assert.equal(out.user.email, 'ada@example.com');
    assert.equal(out.user.role, 'owner');
    assert.match(out.set_password_url, /^http:\/\/localhost:3000\/dashboard\/set-password\/[A-Za-z0-9_-]{43}$/);
    const token = out.set_password_url.split('/').pop();
    const stored = await cli.db.kysely.selectFrom('user_tokens').selectAll().execute();
    assert.ok(!JSON.stringify(stored).includes(token), 'only the hash of the link is stored');
    assert.equal(Date.parse(out.expires_at) - stored[0]!.created_at, 72 * 3600_000);
    for (const [args, words] of [
      [
        ['--email', 'x@example.com', '--workspace', ws.id, '--role', 'boss'],
        /--role must be one of owner, admin, member/,
      ],
      [['--email', 'not-an-address', '--workspace', ws.id], /is not an e-mail address/],
      [['--email', 'x@example.com', '--workspace', 'ws_nope'], /no workspace ws_nope/],
    ] as const) {
      const line = oneErrorLine(await signet(['user', 'create', ...args, '--json']), args.join(' '));
      assert.match(line, words);
    }
  });
});
