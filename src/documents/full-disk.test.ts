// A full disk (issue 26 point 5): DATA_DIR, with the SQLite database and the blob files, on a small tmpfs that fills
// during a burst of uploads. Every answer is 201 or 503 `service_unavailable` with Retry-After; nothing half-written
// remains (no temp file, no row naming a missing blob, no blob file no row names); once space is freed the next
// upload succeeds with no restart.
// Needs root to mount the tmpfs (skipped otherwise); the mount is the test's own and is unmounted by it.
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readSnapshot } from '../backup/backup.repo.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { makePdf } from './pdf/testing/fixtures.js';

const MOUNT_MB = 12;

function mountTmpfs(): { dir: string } | { skip: string } {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return { skip: 'needs root on Linux to mount a tmpfs' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-full-disk-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${MOUNT_MB}m,mode=0700`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    fs.rmdirSync(dir);
    return { skip: `cannot mount a tmpfs here: ${(r.stderr || r.error?.message || '').trim()}` };
  }
  return { dir };
}

const mount = mountTmpfs();
const freeBytes = (dir: string) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};
const blobFiles = (dir: string): string[] =>
  fs.existsSync(dir)
    ? (fs.readdirSync(dir, { recursive: true }) as string[]).filter(
        (f) => /\./.test(path.basename(f)) || /\/[0-9a-f]{32}$/.test(f),
      )
    : [];

describe('a full disk', { skip: 'skip' in mount ? mount.skip : false }, () => {
  const root = 'dir' in mount ? mount.dir : '';
  const dataDir = path.join(root, 'data');
  const filler = path.join(root, 'filler.bin');
  let h: Harness;
  before(async () => {
    fs.mkdirSync(dataDir);
    h = await startHarness({ dataDir });
  });
  after(async () => {
    await h?.close();
    spawnSync('umount', [root]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('a burst of uploads fills it: 201 or 503 with Retry-After, nothing half-written, and it recovers', async (t) => {
    const { token } = await h.tenant('business');
    const pdf = Buffer.from(await makePdf({ pages: 40, text: [['Full disk contract, Ærøskøbing, Müller']] }));
    const send = (i: number) =>
      h.request('POST', '/v1/signing-requests', {
        token,
        body: {
          title: `Full disk ${i}`,
          signers: [{ role: 'signer', email: `s${i}@example.com`, name: `Zoë Ñúñez ${i}` }],
          file: { name: 'contract.pdf', content_base64: pdf.toString('base64') },
          placement: 'auto_append',
        },
      });
    assert.equal((await send(0)).status, 201, 'a first upload with room to spare');
    // Leave room for a few uploads only, then send more than fit.
    fs.writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(root) - 400 * 1024)));
    const statuses: number[] = [];
    for (let i = 1; i <= 30; i++) {
      const r = await send(i);
      statuses.push(r.status);
      assert.ok(r.status === 201 || r.status === 503, `upload ${i}: ${r.status} ${r.text.slice(0, 300)}`);
      if (r.status === 503) {
        assert.equal(r.json.code, 'service_unavailable');
        assert.match(r.headers['retry-after'] ?? '', /^[1-9][0-9]*$/);
      }
    }
    t.diagnostic(`statuses while full: ${statuses.join(' ')}`);
    assert.ok(statuses.includes(503), 'the disk filled during the burst');

    fs.rmSync(filler);
    const again = await send(99);
    assert.equal(again.status, 201, `after space is freed: ${again.text.slice(0, 300)}`);

    // Nothing half-written: no temp file, and every blob a row names is there.
    const files = blobFiles(path.join(dataDir, 'blobs'));
    assert.deepEqual(
      files.filter((f) => f.endsWith('.tmp')),
      [],
      'no temp file left',
    );
    const { blobKeys, counts } = readSnapshot(path.join(dataDir, 'signet.db'));
    const present = new Set(files.map((f) => f.split(path.sep).join('/')));
    assert.deepEqual(
      [...blobKeys].filter((k) => !present.has(k)),
      [],
      'no row names a missing blob',
    );
    assert.equal(counts.documents, 2 + statuses.filter((s) => s === 201).length, 'one document per 201');
    // And no file that no row names: a failed transaction removed the files it had written (blob-store.ts).
    assert.deepEqual(
      [...present].filter((k) => !blobKeys.has(k)),
      [],
      'no orphan blob file',
    );
  });
});
