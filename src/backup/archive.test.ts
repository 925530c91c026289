// The archive format on its own: what tar itself reads, sizes past ustar's 8 GiB, and refusals of what the manifest
// does not vouch for.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ArchiveError, header, parseHeader, readArchive, writeArchive, type Source } from './archive.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-archive-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function* list(...sources: Source[]) {
  yield* sources;
}

describe('backup archive', () => {
  test('tar extracts what writeArchive wrote, byte for byte; a key keeps mode 0600', async () => {
    const src = path.join(tmp, 'src');
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, 'a'), Buffer.alloc(70_000, 7));
    fs.writeFileSync(path.join(src, 'k'), 'secret', { mode: 0o600 });
    fs.writeFileSync(path.join(src, 'empty'), '');
    const out = path.join(tmp, 'a.tar.gz');
    const entries = await writeArchive(
      out,
      list(
        { name: 'blobs/original/' + 'a'.repeat(32), file: path.join(src, 'a'), required: true },
        { name: 'pki/ca.key', file: path.join(src, 'k'), required: true },
        { name: 'pki/empty', file: path.join(src, 'empty'), required: true },
        { name: 'pki/gone', file: path.join(src, 'gone'), required: false },
      ),
      (e) => ({ entries: e }),
      Date.now(),
    );
    assert.deepEqual(
      entries.map((e) => [e.name, e.size]),
      [
        ['blobs/original/' + 'a'.repeat(32), 70_000],
        ['pki/ca.key', 6],
        ['pki/empty', 0],
      ],
    );
    const x = path.join(tmp, 'x');
    fs.mkdirSync(x);
    execFileSync('tar', ['-xzf', out, '-C', x]);
    assert.deepEqual(
      fs.readFileSync(path.join(x, 'blobs/original', 'a'.repeat(32))),
      fs.readFileSync(path.join(src, 'a')),
    );
    assert.equal(fs.statSync(path.join(x, 'pki/ca.key')).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(x, 'MANIFEST.json'), 'utf8')).entries, entries);

    const y = path.join(tmp, 'y');
    fs.mkdirSync(y);
    const read = await readArchive(out, y, () => true);
    assert.deepEqual(read.entries, entries);
    assert.equal(fs.readFileSync(path.join(y, 'pki/ca.key'), 'utf8'), 'secret');

    await assert.rejects(
      writeArchive(out, list(), () => ({}), 0),
      /already exists/,
    );
    await assert.rejects(
      readArchive(out, fs.mkdtempSync(path.join(tmp, 'z')), (n) => n !== 'pki/empty'),
      ArchiveError,
    );
  });

  test('an entry past 8 GiB gets a base-256 size; the header checksum is checked', () => {
    const h = header('signet.db', 9_000_000_000, 0o644, 0);
    assert.equal(parseHeader(h).size, 9_000_000_000);
    assert.equal(parseHeader(header('pki/ca.crt', 700, 0o644, 0)).size, 700);
    h[10] ^= 1;
    assert.throws(() => parseHeader(h), ArchiveError);
  });
});
