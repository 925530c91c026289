// The `signet` command as operators run it: `node bin/signet.js …` in a child process against a real SQLite file,
// and, for the commands whose effect must be immediate, a real `signet serve` child on a loopback port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { openDb, type Db } from '../db/db.js';
import { createKey, findKey } from '../keys/keys.repo.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { withAuditLogAway } from '../audit/testing/away.js';
import { createHook, deleteHook } from '../webhooks/hooks.repo.js';
import { runSignet, startServer as startChildServer, type Run } from '../testing/child-server.js';

/** Exactly one JSON object on stdout, nothing on stderr, exit 0. */
function oneJson(r: Run, label: string): any {
  assert.equal(r.code, 0, `${label}: exit ${r.code}, stderr: ${r.stderr}`);
  assert.equal(r.stderr, '', `${label}: stderr`);
  assert.ok(r.stdout.endsWith('\n'), `${label}: stdout ends with a newline`);
  const lines = r.stdout.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `${label}: exactly one line on stdout, got ${JSON.stringify(r.stdout)}`);
  const v = JSON.parse(lines[0]!);
  assert.ok(v !== null && typeof v === 'object' && !Array.isArray(v), `${label}: a JSON object`);
  return v;
}

/** A failure: non-zero exit, nothing on stdout, exactly one line on stderr (returned). */
function oneErrorLine(r: Run, label: string): string {
  assert.notEqual(r.code, 0, `${label}: should fail, stdout: ${r.stdout}`);
  assert.equal(r.stdout, '', `${label}: stdout must be empty`);
  assert.ok(r.stderr.endsWith('\n'), `${label}: stderr ends with a newline: ${JSON.stringify(r.stderr)}`);
  const lines = r.stderr.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `${label}: exactly one line on stderr, got ${JSON.stringify(r.stderr)}`);
  assert.ok(lines[0]!.trim().length > 0, `${label}: the line says something`);
  return lines[0]!;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Server = {
  port: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  call(
    method: string,
    p: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** `signet serve` as a child on a free loopback port, with helpers to call it and stop it. */
async function startServer(dataDir: string, args: string[] = []): Promise<Server> {
  const { port, child, exited } = await startChildServer(dataDir, { args });
  const agent = new Agent({ keepAliveTimeout: 500 });
  let stopped: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  return {
    port,
    child,
    exited,
    async call(method, p, token, body) {
      const res = await request(`http://127.0.0.1:${port}${p}`, {
        method: method as never,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: agent,
      });
      const text = await res.body.text();
      return { status: res.statusCode, json: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    stop() {
      stopped ??= agent.close().then(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return exited;
      });
      return stopped;
    },
  };
}

type Received = { headers: http.IncomingHttpHeaders; body: string };

/** A webhook receiver on 127.0.0.1 answering each request with the next queued status (200 when none is queued). */
async function startReceiver() {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    statuses,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function verifySignature(header: string, secret: string, body: string): void {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  assert.ok(m, `signature header ${header}`);
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex');
  assert.equal(m[2], expected, 'v1 is HMAC-SHA256 over `${t}.${body}` with the hook secret');
}

/** Every byte the data directory holds (database, WAL, shared memory, anything else). */
function dataDirBytes(dir: string): Buffer {
  const out: Buffer[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(fs.readFileSync(p));
    }
  };
  walk(dir);
  return Buffer.concat(out);
}

// ---------------------------------------------------------------------------------------------------------------

describe('signet CLI', () => {
  let dir: string;
  // The test's own connection to the same SQLite file, for setting up what a test is not about (CLI runs are slow).
  let db: Db;
  const signet = (args: string[], env: Record<string, string> = {}) => runSignet(dir, args, env);
  const seedKey = async (name: string, tier = 'business') => {
    const ws = await createWorkspace(db.kysely, { name, tier }, Date.now());
    const k = await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, Date.now());
    return { ws, id: k.key.id, plaintext: k.plaintext };
  };
  const keyRow = async (id: string) => (await findKey(db.kysely, id))!;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-cli-'));
    db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  });
  after(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

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

  test('key create: svk_live_/lgk_live_ shapes, label is the first 12 characters, the plaintext is stored nowhere', async () => {
    const ws = await createWorkspace(db.kysely, { name: 'Keys Inc', tier: 'business' }, Date.now());
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
    await db.close();
    const bytes = dataDirBytes(dir);
    assert.ok(bytes.length > 0, 'bytes.length > 0');
    for (const { out } of keys) {
      assert.equal(bytes.indexOf(out.plaintext), -1, 'plaintext in the data directory');
      assert.equal(bytes.indexOf(out.plaintext.slice(12)), -1, 'secret part in the data directory');
    }
    // …and not in any column of api_keys: only its SHA-256 and its label are there.
    const sqlite = new Database(path.join(dir, 'signet.db'), { readonly: true });
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
      db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
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
    const refused = await withAuditLogAway(db.kysely, () => signet(['key', 'set-limit', id, '7', '--json']));
    oneErrorLine(refused, 'set-limit while audit_log is away');
    assert.equal((await keyRow(id)).rate_limit, null, 'no limit without its audit row');
    const ok = oneJson(await signet(['key', 'set-limit', id, '7', '--json']), 'set-limit');
    assert.deepEqual(ok, { key_id: id, rate_limit: 7 });
    assert.equal((await keyRow(id)).rate_limit, 7);
    const rows = await db.kysely
      .selectFrom('audit_log')
      .select(['actor', 'action', 'target_id', 'detail'])
      .where('workspace_id', '=', ws.id)
      .execute();
    const actor = `cli:${os.userInfo().username}`;
    assert.deepEqual(rows, [{ actor, action: 'key.limit_set', target_id: id, detail: '7' }]);
  });

  test('user create: a one-time set-password link for the first owner; bad role, e-mail or workspace refused', async () => {
    const ws = await createWorkspace(db.kysely, { name: 'People', tier: 'business' }, Date.now());
    const out = oneJson(
      await signet(['user', 'create', '--email', 'Ada@Example.com', '--workspace', ws.id, '--json']),
      'user create',
    );
    assert.deepEqual(Object.keys(out).sort(), ['expires_at', 'set_password_url', 'user']);
    assert.equal(out.user.email, 'ada@example.com');
    assert.equal(out.user.role, 'owner');
    assert.match(out.set_password_url, /^http:\/\/localhost:3000\/dashboard\/set-password\/[A-Za-z0-9_-]{43}$/);
    const token = out.set_password_url.split('/').pop();
    const stored = await db.kysely.selectFrom('user_tokens').selectAll().execute();
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

  test('a bad environment value stops with exactly one clear line on stderr', async () => {
    const cases: Array<[Record<string, string>, string[], RegExp]> = [
      [{ PORT: 'abc' }, ['serve'], /PORT/],
      [{ PORT: 'abc' }, ['workspace', 'create', '--name', 'X', '--json'], /PORT/],
      [{ LOG_LEVEL: 'loud' }, ['serve'], /LOG_LEVEL/],
      [{ DATABASE_URL: 'mysql://db/signet' }, ['serve'], /DATABASE_URL/],
    ];
    const results = await Promise.all(cases.map(([env, args]) => signet(args, env)));
    results.forEach((r, i) => {
      const [env, args, mention] = cases[i]!;
      const label = `${JSON.stringify(env)} signet ${args[0]}`;
      assert.match(oneErrorLine(r, label), mention, label);
    });
  });

  describe('against a running server', () => {
    let server: Server;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let main: Awaited<ReturnType<typeof seedKey>>;

    before(async () => {
      receiver = await startReceiver();
      main = await seedKey('Live');
      // No worker in this process: only the CLI's --now delivers, so what the receiver sees is the CLI's doing.
      server = await startServer(dir, ['--no-worker']);
    });
    after(async () => {
      if (server) {
        // A server that does not stop on SIGTERM fails the test above; here it must not hang the run as well.
        const kill = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
        await server.stop();
        clearTimeout(kill);
      }
      if (receiver) await receiver.close();
    });

    test('key revoke is immediate: 200 before, 401 invalid_key on the very next request; who and when are listed', async () => {
      const k = await createKey(db.kysely, { workspaceId: main.ws.id, legacy: true }, Date.now());
      assert.equal((await server.call('GET', '/v1/hooks', k.plaintext)).status, 200);
      assert.equal((await server.call('GET', '/v1/me', k.plaintext)).status, 200);
      const revoked = await signet(['key', 'revoke', k.key.id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match(revoked.stdout, new RegExp(`^revoked ${k.key.id} at \\S+ by cli:`));
      for (const p of ['/v1/hooks', '/v1/me']) {
        const r = await server.call('GET', p, k.plaintext);
        assert.equal(r.status, 401, p);
        assert.deepEqual(r.json, { error: r.json.error, code: 'invalid_key' });
      }
      // The workspace's other key is untouched (rotation).
      assert.equal((await server.call('GET', '/v1/hooks', main.plaintext)).status, 200);
      const listed = oneJson(await signet(['key', 'list', '--workspace', main.ws.id, '--json']), 'key list');
      const row = listed.keys.find((x: { id: string }) => x.id === k.key.id);
      assert.match(row.revoked_by, /^cli:.+/);
      assert.match(row.revoked_at, ISO_MS);
      assert.ok(
        Math.abs(Date.parse(row.revoked_at) - Date.now()) < 300_000,
        'Math.abs(Date.parse(row.revoked_at) - Date.now()) < 300_000',
      );
      assert.equal(listed.keys.find((x: { id: string }) => x.id === main.id).revoked_at, null);
    });

    test('key set-limit 5: the running server answers 5 requests and refuses the 6th with 429', async () => {
      const k = await createKey(db.kysely, { workspaceId: main.ws.id, legacy: false }, Date.now());
      const [set, zero] = await Promise.all([
        signet(['key', 'set-limit', k.key.id, '5', '--json']),
        signet(['key', 'set-limit', k.key.id, '0', '--json']),
      ]);
      assert.deepEqual(oneJson(set, 'set-limit'), { key_id: k.key.id, rate_limit: 5 });
      oneErrorLine(zero, 'set-limit 0');
      for (let i = 1; i <= 5; i++) {
        const r = await server.call('GET', '/v1/hooks', k.plaintext);
        assert.equal(r.status, 200, `request ${i}`);
        assert.equal(r.headers['ratelimit-limit'], '5');
        assert.equal(r.headers['ratelimit-remaining'], String(5 - i));
      }
      const sixth = await server.call('GET', '/v1/hooks', k.plaintext);
      assert.equal(sixth.status, 429);
      assert.deepEqual(sixth.json, { error: sixth.json.error, code: 'rate_limited' });
      assert.equal(sixth.headers['ratelimit-remaining'], '0');
      assert.ok(Number(sixth.headers['retry-after']) >= 1, "Number(sixth.headers['retry-after']) >= 1");
      // /v1/me is exempt.
      assert.equal((await server.call('GET', '/v1/me', k.plaintext)).status, 200);
    });

    test('key set-ips takes effect on the running server at once', async () => {
      const k = await createKey(db.kysely, { workspaceId: main.ws.id, legacy: false }, Date.now());
      oneJson(await signet(['key', 'set-ips', k.key.id, '10.0.0.0/8', '--json']), 'set-ips');
      const refused = await server.call('GET', '/v1/hooks', k.plaintext);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.json, { error: refused.json.error, code: 'ip_not_allowed', ip: '127.0.0.1' });
      oneJson(await signet(['key', 'set-ips', k.key.id, '127.0.0.0/30', '--json']), 'set-ips');
      assert.equal((await server.call('GET', '/v1/hooks', k.plaintext)).status, 200);
    });

    test('hooks test --now sends the synthetic event; deliveries list shows the attempt; replay --now re-sends the same event', async () => {
      const created = await server.call('POST', '/v1/hooks', main.plaintext, { target_url: receiver.url, events: [] });
      assert.equal(created.status, 201);
      const hook = created.json;
      receiver.statuses.push(500); // the first attempt fails, so the delivery is retrying with a next attempt

      const sent = oneJson(await signet(['hooks', 'test', hook.id, '--now', '--json']), 'hooks test');
      assert.deepEqual(Object.keys(sent).sort(), ['event_id', 'hook_id']);
      assert.equal(sent.hook_id, hook.id);
      assert.match(sent.event_id, /^evt_[0-9a-f]{32}$/);
      assert.equal(receiver.received.length, 1, 'delivered before the command returned');
      const first = receiver.received[0]!;
      const body = JSON.parse(first.body);
      assert.equal(body.event, 'signing_request.sent');
      assert.equal(body.event_id, sent.event_id);
      assert.equal(body.test, true);
      assert.equal(body.signing_request_id, 'req_test_synthetic');
      assert.equal(body.document_id, 'doc_test_synthetic');
      assert.equal(body.workspace_id, main.ws.id);
      assert.match(body.created_at, ISO_MS);
      assert.equal(first.headers['user-agent'], 'service-webhooks/1.0');
      assert.equal(first.headers['x-service-event-id'], sent.event_id);
      assert.equal(first.headers['x-service-event'], 'signing_request.sent');
      assert.equal(first.headers['x-legacy-signature'], first.headers['x-service-signature']);
      verifySignature(String(first.headers['x-service-signature']), hook.secret, first.body);

      const listed = oneJson(await signet(['deliveries', 'list', '--hook', hook.id, '--json']), 'deliveries list');
      assert.deepEqual(Object.keys(listed), ['deliveries']);
      assert.equal(listed.deliveries.length, 1);
      const d = listed.deliveries[0];
      assert.equal(d.hook_id, hook.id);
      assert.equal(d.event_id, sent.event_id);
      assert.equal(d.event, 'signing_request.sent');
      assert.equal(d.status, 'retrying');
      assert.equal(d.attempts, 1);
      assert.equal(d.last_status_code, 500);
      assert.equal(d.attempts_log.length, 1);
      assert.equal(d.attempts_log[0].attempt, 1);
      assert.equal(d.attempts_log[0].status_code, 500);
      assert.match(d.next_attempt_at, ISO_MS);
      // Attempt 2 is due one minute after attempt 1 failed.
      const gap = Date.parse(d.next_attempt_at) - Date.parse(d.attempts_log[0].started_at);
      assert.ok(
        gap >= 60_000 && gap <= 60_000 + d.attempts_log[0].duration_ms + 1_000,
        `next attempt ${gap} ms after the first`,
      );

      const [replayRun, noHook, noDelivery] = await Promise.all([
        signet(['deliveries', 'replay', d.id, '--now', '--json']),
        signet(['hooks', 'test', 'hook_nope', '--now', '--json']),
        signet(['deliveries', 'replay', 'del_nope', '--now', '--json']),
      ]);
      assert.match(oneErrorLine(noHook, 'unknown hook'), /hook_nope/);
      assert.match(oneErrorLine(noDelivery, 'unknown delivery'), /del_nope/);
      const replayed = oneJson(replayRun, 'deliveries replay');
      assert.deepEqual(Object.keys(replayed), ['delivery']);
      assert.notEqual(replayed.delivery.id, d.id);
      assert.equal(replayed.delivery.event_id, sent.event_id);
      assert.equal(replayed.delivery.status, 'succeeded');
      assert.equal(replayed.delivery.attempts, 1);
      assert.equal(replayed.delivery.next_attempt_at, null);
      assert.equal(receiver.received.length, 2);
      const second = receiver.received[1]!;
      assert.equal(second.headers['x-service-event-id'], sent.event_id, 'the same event id again, so receivers dedupe');
      assert.equal(second.body, first.body, 'the same body byte for byte');
      verifySignature(String(second.headers['x-service-signature']), hook.secret, second.body);

      // The original delivery is still retrying (nothing runs a worker here); the replay is its own row.
      const rows = await db.kysely
        .selectFrom('deliveries')
        .select(['id', 'status', 'event_id'])
        .where('hook_id', '=', hook.id)
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.id, r.status, r.event_id]).sort(),
        [
          [d.id, 'retrying', sent.event_id],
          [replayed.delivery.id, 'succeeded', sent.event_id],
        ].sort(),
      );
    });

    test('SIGTERM stops the server with exit 0, and last-used data reaches key list', async () => {
      const e = await server.stop();
      assert.deepEqual({ code: e.code, signal: e.signal }, { code: 0, signal: null });
      const listed = oneJson(await signet(['key', 'list', '--workspace', main.ws.id, '--json']), 'key list');
      const row = listed.keys.find((x: { id: string }) => x.id === main.id);
      assert.match(row.last_used_at, ISO_MS);
      assert.equal(row.last_used_ip, '127.0.0.x');
    });
  });

  test('deliveries list --status filters by state (failed = retrying and giving_up); replay refuses a deleted hook', async () => {
    const receiver = await startReceiver();
    try {
      receiver.statuses.push(500);
      const ws = await createWorkspace(db.kysely, { name: 'Deliveries', tier: 'business' }, Date.now());
      const hook = await createHook(
        db.kysely,
        { workspaceId: ws.id, targetUrl: receiver.url, events: [], source: 'api' },
        Date.now(),
      );
      oneJson(await signet(['hooks', 'test', hook.id, '--now', '--json']), 'hooks test');
      assert.equal(receiver.received.length, 1);
      const [d] = await db.kysely.selectFrom('deliveries').selectAll().where('hook_id', '=', hook.id).execute();
      assert.deepEqual([d!.status, d!.attempts], ['retrying', 1], 'failed once, waiting for attempt 2');

      const ids = (r: Run, label: string) => oneJson(r, label).deliveries.map((x: { id: string }) => x.id);
      const list = (...more: string[]) => signet(['deliveries', 'list', '--hook', hook.id, ...more]);
      const [retrying, failed, succeeded, pending, bogus, human] = await Promise.all([
        list('--status', 'retrying', '--json'),
        list('--status', 'failed', '--json'),
        list('--status', 'succeeded', '--json'),
        list('--status', 'pending', '--json'),
        list('--status', 'bogus', '--json'),
        list('--status', 'retrying'),
      ]);
      assert.deepEqual(ids(retrying, 'retrying'), [d!.id]);
      assert.deepEqual(ids(failed, 'failed'), [d!.id]);
      assert.deepEqual(ids(succeeded, 'succeeded'), []);
      assert.deepEqual(ids(pending, 'pending'), []);
      assert.match(
        oneErrorLine(bogus, 'unknown status'),
        /--status must be one of pending\|retrying\|succeeded\|giving_up\|failed$/,
      );
      assert.equal(human.code, 0, human.stderr);
      assert.match(
        human.stdout,
        new RegExp(`^${d!.id}\tsigning_request\\.sent\tretrying\tattempts 1\tnext \\S+\tnon-2xx response: 500\n$`),
      );

      // A deleted hook's deliveries are not replayed: one line on stderr, no row, nothing sent.
      assert.ok(
        await deleteHook(db.kysely, ws.id, hook.id, Date.now()),
        'await deleteHook(db.kysely, ws.id, hook.id, Date.now())',
      );
      const gone = await signet(['deliveries', 'replay', d!.id, '--now', '--json']);
      assert.match(oneErrorLine(gone, 'deleted hook'), new RegExp(`the hook of delivery ${d!.id} is deleted`));
      const rows = await db.kysely.selectFrom('deliveries').select('id').where('hook_id', '=', hook.id).execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [d!.id],
      );
      assert.equal(receiver.received.length, 1, 'nothing sent');
    } finally {
      await receiver.close();
    }
  });
});
