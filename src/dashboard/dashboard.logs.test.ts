// Secrets never reach the logs: a real `signet serve` at LOG_LEVEL=debug, driven through the dashboard (set-password
// link, sign-in, a key created and used, a hook created) and an embed session opened; then its whole log output is
// searched for every secret it handed out. The key and the hook secret appear in exactly one response body.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { openDb } from '../db/db.js';
import { setAllowedOrigins } from '../keys/keys.repo.js';
import { systemClock } from '../lib/clock.js';
import { startServer, type ChildServer } from '../testing/child-server.js';
import type { Harness, Res } from '../testing/harness.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { createUserLink } from './people.service.js';
import { dashboardClient, PASSWORD } from './testing/client.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-logs-'));
let server: ChildServer | undefined;
after(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('no plaintext key, hook secret, session, CSRF or link token in the logs; each secret in one response', async () => {
  const db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  const ws = await createWorkspace(db.kysely, { name: 'Logs', tier: 'enterprise' }, Date.now());
  const link = await createUserLink(
    { db, clock: systemClock, config: { baseUrl: 'http://localhost:3000' } },
    { email: 'logs@example.com', workspaceId: ws.id, role: 'owner', by: 'test' },
  );
  await db.close();
  server = await startServer(dir, { env: { LOG_LEVEL: 'debug' } });
  const base = `http://127.0.0.1:${server.port}`;
  const bodies: string[] = [];
  // Just what dashboardClient needs of a harness: requests to this server.
  const h = {
    async request(method: string, p: string, o: { headers?: Record<string, string>; rawBody?: string } = {}) {
      const r = await request(`${base}${p}`, { method: method as never, headers: o.headers, body: o.rawBody });
      const text = await r.body.text();
      bodies.push(text);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: r.statusCode, headers, text, json } as Res;
    },
  } as unknown as Harness;

  const c = dashboardClient(h);
  const linkPath = new URL(link.url).pathname;
  await c.get(linkPath);
  assert.equal((await c.post(linkPath, { password: PASSWORD, confirm: PASSWORD })).status, 303);
  await c.get('/dashboard/sign-in');
  assert.equal((await c.post('/dashboard/sign-in', { email: 'logs@example.com', password: PASSWORD })).status, 303);
  const session = c.cookies.get('signet_session')!;
  const csrfSecret = c.cookies.get('signet_csrf')!;
  await c.get('/dashboard/developers/keys');
  const created = await c.post('/dashboard/developers/keys');
  const key = /value="(svk_live_[0-9a-f]{32})"/.exec(created.text)![1]!;
  const keyId = /\/dashboard\/developers\/keys\/(key_[0-9a-f]+)/.exec(created.text)![1]!;
  await c.get('/dashboard/developers/webhooks');
  const hook = await c.post('/dashboard/developers/webhooks', { target_url: 'http://127.0.0.1:9/hook' });
  assert.equal(hook.status, 201);
  const secret = /value="(whsec_[A-Za-z0-9_-]+)"/.exec(hook.text)![1]!;

  // The key at work: an API call, a signing request and an embed session (its URL carries a token).
  const api = (method: string, p: string, body?: unknown) =>
    h.request(method, p, {
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      rawBody: body ? JSON.stringify(body) : undefined,
    });
  assert.equal((await api('GET', '/v1/me')).status, 200);
  const db2 = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  await setAllowedOrigins(db2.kysely, keyId, ['https://app.example']);
  await db2.close();
  const { makePdf } = await import('../documents/pdf/testing/fixtures.js');
  const sr = await api('POST', '/v1/signing-requests', {
    signers: [{ role: 'a', email: 'signer@example.com', name: 'A' }],
    file: {
      name: 'x.pdf',
      content_base64: Buffer.from(await makePdf({ pages: 1, text: [['Logs']] })).toString('base64'),
    },
    placement: 'auto_append',
  });
  assert.equal(sr.status, 201, sr.text);
  const ses = await api('POST', '/v1/embedded/sign-sessions', {
    signing_request_id: sr.json.signing_requests[0].id,
    origin: 'https://app.example',
    ttl_seconds: 300,
    locale: 'en',
  });
  assert.equal(ses.status, 201, ses.text);
  const sessionToken = ses.json.url.split('/').pop();
  assert.equal((await h.request('GET', `/embed/sign/${sessionToken}`)).status, 200);
  await new Promise((r) => setTimeout(r, 500)); // let the last log lines reach the pipe

  const log = server.log();
  assert.match(log, /"url":"\/embed\/sign\/\[token\]"/, 'requests are logged, with the token masked');
  const linkToken = linkPath.split('/').pop()!;
  for (const [name, value] of Object.entries({ key, secret, session, csrfSecret, linkToken, sessionToken })) {
    assert.ok(!log.includes(value), `${name} is not in the log`);
  }
  for (const [name, value] of Object.entries({ key, secret })) {
    assert.equal(bodies.filter((b) => b.includes(value)).length, 1, `${name} is in exactly one response`);
  }
  // The session URL: in the mint response, and in its own page's same-origin links (the page is opened by it).
  assert.equal(bodies.filter((b) => b.includes(sessionToken)).length, 2, 'sessionToken: mint response and its page');
});
