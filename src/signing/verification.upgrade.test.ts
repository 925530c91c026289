// A rolling upgrade to migration 011, on SQLite and PostgreSQL: the new code on a schema without it
// (SIGNET_AUTO_MIGRATE=0) creates, shows and signs requests without verification as before; a request, an
// instantiate or a confirm whose replacement recipients ask for verification is refused with 503
// verification_unavailable and Retry-After, with nothing created or sent; once the migration has run, the same
// process accepts them without a restart and the signer meets the gate. The real app on a real port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { loadConfig } from '../config.js';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { createKey } from '../keys/keys.repo.js';
import { ManualClock } from '../lib/clock.js';
import { startSmtpPeer, type SmtpPeer } from '../mail/testing/smtp-peer.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { b64 } from '../testing/e2e.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';

const PDF = b64(await makePdf({ text: [['Agreement']] }));
const pg = await postgresForTests();
const FROM = '010-signer-copies';

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  const skip = kind === 'PostgreSQL' && 'skip' in pg ? pg.skip : false;
  describe(`signer verification on a schema before migration 011 (${kind})`, { skip }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-verify-upgrade-'));
    let db: Db;
    let drop = async () => undefined as void;
    let rt: Runtime;
    let smtp: SmtpPeer;
    let base = '';
    let token = '';
    before(async () => {
      if (kind === 'PostgreSQL') {
        const fresh = await freshPostgres((pg as { url: string }).url, FROM);
        db = fresh.db;
        drop = fresh.drop;
      } else {
        db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`, { migrate: false });
        await migrateToLatest(db, FROM);
        drop = () => db.close();
      }
      smtp = await startSmtpPeer();
      const clock = new ManualClock(Date.parse('2026-11-22T10:00:00.000Z'));
      const config = loadConfig({
        DATA_DIR: dir,
        SIGNET_AUTO_MIGRATE: '0',
        LOG_LEVEL: 'silent',
        SMTP_URL: smtp.url,
        PUBLIC_RATE_LIMIT: '1000000',
      });
      rt = await createRuntime(config, { api: true, worker: true, clock, db, logger: false });
      await rt.app!.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(rt.app!.server.address() as { port: number }).port}`;
      const ws = await createWorkspace(db.kysely, { name: 'Upgrade', tier: 'business' }, clock.now());
      token = (await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, clock.now())).plaintext;
    });
    after(async () => {
      await rt?.close();
      await drop();
      await smtp?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    async function call(method: string, p: string, body?: unknown, auth = true) {
      const res = await request(`${base}${p}`, {
        method: method as 'GET',
        headers: {
          ...(auth ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.body.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, headers: res.headers, text, json };
    }
    let n = 0;
    const address = (who: string) => `${who}.${++n}@example.com`;
    const create = (email: string, extra: Record<string, unknown> = {}) =>
      call('POST', '/v1/signing-requests', {
        signers: [{ role: 'a', email, name: 'Up', ...extra }],
        file: { name: 'a.pdf', content_base64: PDF },
        placement: 'auto_append',
      });
    async function linkFor(email: string): Promise<string> {
      await rt.work();
      const mails = (await smtp.parsed()).filter((m) => JSON.stringify(m.to).includes(email));
      const link = /\/sign\/([A-Za-z0-9_-]{43})/.exec(mails.at(-1)?.text ?? '')?.[1];
      assert.ok(link, `a signing link was mailed to ${email}`);
      return link;
    }
    const count = async (t: 'documents' | 'template_instances' | 'signing_requests') =>
      (await db.kysely.selectFrom(t).select('id').execute()).length;
    function unavailable(r: Awaited<ReturnType<typeof call>>, what: string) {
      assert.equal(r.status, 503, `${what}: ${r.text}`);
      assert.equal(r.json.code, 'verification_unavailable', what);
      assert.equal(r.headers['retry-after'], '30', what);
    }
    const gated = async (email: string) =>
      (await call('GET', `/sign/${await linkFor(email)}`, undefined, false)).text.includes('data-state="verification"');
    const instantiate = (tplId: string, recipients: unknown[], review = false) =>
      call('POST', `/v1/templates/${tplId}/instantiate`, { recipients, field_values: VALUES, review });
    const people = () => ({
      client: { slot: 'client', name: 'Client', email: address('client') },
      provider: { slot: 'provider', name: 'Provider', email: address('provider') },
    });

    test('old schema: 503 for verification only, everything else works; after migrating, it works', async () => {
      // Without verification: created, shown, signed.
      const plainTo = address('plain');
      const plain = await create(plainTo);
      assert.equal(plain.status, 201, plain.text);
      const link = await linkFor(plainTo);
      const page = await call('GET', `/sign/${link}`, undefined, false);
      assert.match(page.text, /signer-data/);
      assert.equal((await call('GET', `/sign/${link}/document.pdf`, undefined, false)).status, 200);
      assert.equal((await call('POST', `/sign/${link}/view`, {}, false)).status, 200);
      const signed = await call('POST', `/sign/${link}/sign`, { signature: { type: 'typed', text: 'Up' } }, false);
      assert.equal(signed.status, 200, signed.text);
      await rt.work();
      assert.equal((await call('GET', `/v1/documents/${plain.json.document_id}`)).json.status, 'completed');

      // With verification: refused, nothing created.
      const docs = await count('documents');
      unavailable(await create(address('v'), { verification: 'email_code' }), 'create');
      assert.equal(await count('documents'), docs, 'nothing created');

      // Templates: instantiate with verification refused; staged without, confirm with replacement refused.
      const tpl = await call('POST', '/v1/templates', await templateBody());
      assert.equal(tpl.status, 201, tpl.text);
      const a = people();
      const instances = await count('template_instances');
      unavailable(await instantiate(tpl.json.id, [{ ...a.client, verification: 'email_code' }, a.provider]), 'inst');
      assert.equal(await count('template_instances'), instances, 'no instance');
      const direct = await instantiate(tpl.json.id, [a.client, a.provider]);
      assert.equal(direct.status, 201, direct.text);
      const staged = await instantiate(tpl.json.id, [a.client, a.provider], true);
      assert.equal(staged.status, 201, staged.text);
      const ti = staged.json.template_instance;
      const requests = await count('signing_requests');
      const withCode = [{ ...a.client, verification: 'email_code' }, a.provider];
      const confirmPath = `/v1/template-instances/${ti.id}/confirm`;
      unavailable(await call('POST', confirmPath, { recipients: withCode }), 'confirm with replacement');
      assert.equal(await count('signing_requests'), requests, 'nobody invited');
      assert.equal((await call('GET', `/v1/template-instances/${ti.id}`)).json.status, 'staged');
      // The job runner's reminder jobs wait too (012 comes after 011).
      assert.match(String((await rt.runJob('send-reminders')).skipped), /012-reminders/);

      // `signet migrate` while the process runs: the same calls now work, and the signers meet the gate.
      await migrateToLatest(db);
      const laterTo = address('later');
      const later = await create(laterTo, { verification: 'email_code' });
      assert.equal(later.status, 201, later.text);
      assert.ok(await gated(laterTo), 'the request signer meets the gate');
      const confirmed = await call('POST', confirmPath, { recipients: withCode });
      assert.equal(confirmed.status, 200, confirmed.text);
      assert.ok(await gated(a.client.email), 'the replacement recipient meets the gate');
      const b = people();
      const inst = await instantiate(tpl.json.id, [{ ...b.client, verification: 'email_code' }, b.provider]);
      assert.equal(inst.status, 201, inst.text);
      assert.ok(await gated(b.client.email), 'the template recipient meets the gate');
    });
  });
}
