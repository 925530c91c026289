// The operator's view of templates: `signet templates list --json` and `signet jobs run expire-reviews`, run as the
// real CLI against the data directory a real `signet serve` writes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signetJson, startServer, type ChildServer } from '../testing/child-server.js';
import { templateBody } from './testing/fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-tpl-cli-'));
let server: ChildServer | undefined;
after(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('signet templates list --workspace WS --json lists what the API created; expire-reviews runs', async () => {
  const ws = (await signetJson(dir, ['workspace', 'create', '--name', 'Cli', '--tier', 'business'])).workspace;
  const key = await signetJson(dir, ['key', 'create', '--workspace', ws.id]);
  server = await startServer(dir);
  const res = await fetch(`http://127.0.0.1:${server.port}/v1/templates`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.plaintext}`, 'content-type': 'application/json' },
    body: JSON.stringify(await templateBody('Listed template')),
  });
  assert.equal(res.status, 201, await res.clone().text());
  const created = (await res.json()) as { id: string };

  const listed = await signetJson(dir, ['templates', 'list', '--workspace', ws.id, '--json']);
  assert.deepEqual(
    listed.templates.map((t: { id: string; name: string; current_version: number }) => [
      t.id,
      t.name,
      t.current_version,
    ]),
    [[created.id, 'Listed template', 1]],
  );
  const other = (await signetJson(dir, ['workspace', 'create', '--name', 'Other', '--tier', 'business'])).workspace;
  assert.deepEqual((await signetJson(dir, ['templates', 'list', '--workspace', other.id, '--json'])).templates, []);

  const job = await signetJson(dir, ['jobs', 'run', 'expire-reviews']);
  assert.equal(job.result?.expired ?? job.expired, 0, JSON.stringify(job));
});
