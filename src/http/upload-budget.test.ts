// Twenty 25 MB signing-request uploads at once against `signet serve` as a real child process: every answer is a
// 201 or a catalogued refusal (503 service_unavailable with Retry-After when the bodies in flight are at their
// bound), never another 5xx, and the process's peak resident memory stays under the ceiling README states.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { makeBigPdf, makePdf } from '../documents/pdf/testing/fixtures.js';
import { FILE_BODY_LIMIT, MAX_FILE_BYTES } from '../limits.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { signetJson, startServer, type ChildServer } from '../testing/child-server.js';
import { createByteBudget } from './upload-budget.js';

/** README, "Running in production": the peak the default limits keep a process under. */
const RSS_CEILING_MB = 1536;
const UPLOADS = 20;

/** The process's peak resident set so far (VmHWM), in MB. */
const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe('bodies in flight', () => {
  let dir: string;
  let server: ChildServer;
  let token: string;
  const agent = new Agent({ connections: UPLOADS, bodyTimeout: 600_000, headersTimeout: 600_000 });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-uploads-'));
    const ws = (await signetJson(dir, ['workspace', 'create', '--name', 'Uploads', '--tier', 'enterprise'])).workspace;
    const key = await signetJson(dir, ['key', 'create', '--workspace', ws.id]);
    await signetJson(dir, ['key', 'set-limit', key.key.id, '1000']);
    token = key.plaintext;
    server = await startServer(dir);
  });
  after(async () => {
    await agent.close();
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test(`${UPLOADS} concurrent 25 MB uploads: 201 or a catalogued refusal each, and memory stays under the ceiling`, async () => {
    const pdf = await makeBigPdf(MAX_FILE_BYTES - 64 * 1024);
    // One body for every request: the test's own memory stays small and the server sees 20 full uploads.
    const body = Buffer.from(
      JSON.stringify({
        signers: [{ role: 'signer', email: 'big@example.com', name: 'Big Upload' }],
        file: { name: 'big.pdf', content_base64: Buffer.from(pdf).toString('base64') },
        placement: 'auto_append',
      }),
    );
    assert.ok(body.byteLength > 33 * 1024 * 1024, `${body.byteLength} bytes`);
    const before = peakRssMb(server.child.pid!);

    const answers = await Promise.all(
      Array.from({ length: UPLOADS }, async () => {
        const res = await request(`http://127.0.0.1:${server.port}/v1/signing-requests`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
          dispatcher: agent,
        });
        const text = await res.body.text();
        return { status: res.statusCode, retryAfter: res.headers['retry-after'], json: JSON.parse(text) };
      }),
    );

    const byStatus = answers.reduce<Record<number, number>>(
      (m, a) => ({ ...m, [a.status]: (m[a.status] ?? 0) + 1 }),
      {},
    );
    const peak = peakRssMb(server.child.pid!);
    console.log(
      `${UPLOADS} uploads of ${body.byteLength} bytes: ${JSON.stringify(byStatus)}; peak RSS ${Math.round(before)} → ${Math.round(peak)} MB`,
    );
    for (const a of answers) {
      if (a.status === 201) assert.match(a.json.document_id, /^doc_/);
      else {
        assert.equal(a.status, 503, JSON.stringify(a.json));
        assert.equal(a.json.code, 'service_unavailable');
        assert.ok(Number(a.retryAfter) > 0, 'Retry-After');
      }
    }
    assert.ok((byStatus[201] ?? 0) >= 1, 'uploads within the bound are served');
    assert.ok(peak < RSS_CEILING_MB, `peak RSS ${Math.round(peak)} MB, ceiling ${RSS_CEILING_MB} MB`);
    assert.equal(server.child.exitCode, null, 'the server is still up');
    const health = await request(`http://127.0.0.1:${server.port}/healthz`, { dispatcher: agent });
    assert.equal(health.statusCode, 200);
    await health.body.dump();
  });
});

test('the byte budget: reservations up to the bound, freed ones reusable', () => {
  const b = createByteBudget(100);
  assert.equal(b.take(60), true);
  assert.equal(b.take(50), false, 'would pass the bound: nothing reserved');
  assert.equal(b.used, 60);
  assert.equal(b.take(40), true);
  b.give(60);
  assert.equal(b.take(60), true);
  assert.equal(b.used, 100);
});

describe('file_url downloads share the budget', () => {
  let h: Harness;
  let files: http.Server;
  let release: () => void = () => undefined;
  let downloading: Promise<void>;
  before(async () => {
    // The smallest budget allowed: one largest body, so one 25 MB download fits and a second does not.
    h = await startHarness({ env: { MAX_BODIES_IN_FLIGHT_BYTES: String(FILE_BODY_LIMIT) } });
    const pdf = await makePdf({ text: [['{{signature:signer}}']] });
    const held = new Promise<void>((r) => (release = r));
    let started: () => void;
    downloading = new Promise<void>((r) => (started = r));
    files = http.createServer((_req, res) => {
      started();
      void held.then(() => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf));
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    release();
    await new Promise<void>((r) => files.close(() => r()));
    await h.close();
  });

  test(
    'a second download while one is held: 503 service_unavailable; once it is done, downloads are admitted again',
    { timeout: 30_000 },
    async () => {
      const t = await h.tenant('business');
      const url = `http://127.0.0.1:${(files.address() as { port: number }).port}/doc.pdf`;
      const create = () =>
        h.request('POST', '/v1/signing-requests', {
          token: t.token,
          body: {
            signers: [{ role: 'signer', email: 'a@example.com', name: 'A' }],
            file_url: url,
            placement: 'anchors',
          },
        });
      const first = create();
      // The first request holds its reservation while the file server holds its download.
      await downloading;
      const second = await create();
      assert.equal(second.status, 503, second.text);
      assert.equal(second.json.code, 'service_unavailable');
      assert.ok(Number(second.headers['retry-after']) > 0, "Number(second.headers['retry-after']) > 0");
      release();
      assert.equal((await first).status, 201);
      assert.equal((await create()).status, 201, 'the reservation was given back');
    },
  );
});
