// The file blob store: bytes back as stored, each kind in its folder, and a put after that folder was removed (the
// store makes a folder once per process) still stores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFileBlobStore } from './blob-store.js';

test('file blob store: get gives what put stored; a kind folder removed since is made again', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-blobs-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = createFileBlobStore(dir);
  const a = await store.put(new Uint8Array([1, 2, 3]), 'original');
  assert.match(a, /^original\/[0-9a-f]{32}$/);
  assert.deepEqual(await store.get(a), new Uint8Array([1, 2, 3]));
  fs.rmSync(path.join(dir, 'original'), { recursive: true });
  const b = await store.put(new Uint8Array([4, 5]), 'original');
  assert.deepEqual(await store.get(b), new Uint8Array([4, 5]));
  assert.deepEqual(fs.readdirSync(path.join(dir, 'original')), [b.split('/')[1]], 'no temp file left');
});
