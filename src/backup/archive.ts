// A Signet backup archive: a gzip-compressed POSIX tar (ustar), so `tar tzf` lists it. Its last entry, MANIFEST.json,
// names every other entry with its size and SHA-256. Guarantees: `writeArchive` publishes the file with one rename
// once it is complete (a failed backup leaves none); `readArchive` unpacks only into the directory it is given and
// refuses, with one `ArchiveError`, an archive that is truncated, altered, has entries the manifest does not name
// exactly (missing, extra, different) or names outside the allowed shapes.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

export const MANIFEST = 'MANIFEST.json';
const BLOCK = 512;
const MAX_OCTAL = 0o77777777777; // what ustar's 11 octal digits hold (8 GiB)

/** The archive is unusable; the message is one line saying why. */
export class ArchiveError extends Error {}

/** A required source was not there (deleted after it was listed or named). */
export class SourceGone extends Error {
  constructor(readonly entry: string) {
    super(`${entry} was deleted before it could be copied`);
  }
}

export type ManifestEntry = { name: string; size: number; sha256: string };
/** A file to archive as `name`; a source not `required` that is gone by the time it is read is left out. */
export type Source = { name: string; file: string; required: boolean };

const octal = (h: Buffer, at: number, len: number, v: number) =>
  h.write(`${v.toString(8).padStart(len - 1, '0')}\0`, at, len, 'latin1');

export function header(name: string, size: number, mode: number, mtime: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`cannot archive ${name}: name longer than 100 bytes`);
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode & 0o777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  if (size <= MAX_OCTAL) octal(h, 124, 12, size);
  else {
    // GNU base-256, as tar itself writes sizes past 8 GiB.
    h[124] = 0x80;
    h.writeUIntBE(size, 126, 6);
  }
  octal(h, 136, 12, Math.floor(mtime / 1000));
  h.fill(0x20, 148, 156); // the checksum is summed with its own field as spaces
  h.write('0', 156, 'latin1');
  h.write('ustar\u000000', 257, 'latin1');
  const sum = h.reduce((a, b) => a + b, 0);
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return h;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

async function* tar(
  sources: AsyncIterable<Source>,
  entries: ManifestEntry[],
  manifest: (entries: ManifestEntry[]) => unknown,
  now: number,
): AsyncGenerator<Buffer> {
  for await (const s of sources) {
    const fh = await fs.open(s.file, 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' && !s.required) return null;
      if (err.code === 'ENOENT') throw new SourceGone(s.name);
      throw new Error(`cannot read ${s.file}: ${err.code ?? err.message}`);
    });
    if (!fh) continue;
    const st = await fh.stat();
    const hash = createHash('sha256');
    let size = 0;
    yield header(s.name, st.size, st.mode, now);
    // Only the bytes the header announced, were the file to grow; the stream closes the file.
    if (st.size === 0) await fh.close();
    const data = st.size === 0 ? [] : fh.createReadStream({ end: st.size - 1 });
    for await (const chunk of data as AsyncIterable<Buffer>) {
      size += chunk.length;
      hash.update(chunk);
      yield chunk;
    }
    if (size !== st.size) throw new Error(`${s.file} changed size while it was archived`);
    yield padding(size);
    entries.push({ name: s.name, size, sha256: hash.digest('hex') });
  }
  const body = Buffer.from(`${JSON.stringify(manifest(entries), null, 2)}\n`);
  yield header(MANIFEST, body.length, 0o644, now);
  yield body;
  yield padding(body.length);
  yield Buffer.alloc(2 * BLOCK);
}

/** Writes the archive to `target` (which must not exist yet); `manifest` turns the entries into MANIFEST.json. */
export async function writeArchive(
  target: string,
  sources: AsyncIterable<Source>,
  manifest: (entries: ManifestEntry[]) => unknown,
  now: number,
): Promise<ManifestEntry[]> {
  const entries: ManifestEntry[] = [];
  const tmp = `${target}.${randomBytes(4).toString('hex')}.partial`;
  try {
    await pipeline(tar(sources, entries, manifest, now), createGzip(), createWriteStream(tmp, { flags: 'wx' }));
    const fh = await fs.open(tmp, 'r');
    await fh.sync().finally(() => fh.close());
    // link(2) fails on an existing target, where rename(2) would replace it.
    await fs.link(tmp, target).catch((err: NodeJS.ErrnoException) => {
      throw new Error(err.code === 'EEXIST' ? `${target} already exists` : `cannot write ${target}: ${err.code}`);
    });
    return entries;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Reads exactly what is asked of a byte stream, or says the archive ends early. */
class Bytes {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly it: AsyncIterator<Buffer>) {}
  private async fill(): Promise<boolean> {
    const r = await this.it.next();
    if (r.done) return false;
    this.buf = this.buf.length === 0 ? r.value : Buffer.concat([this.buf, r.value]);
    return true;
  }
  async take(n: number): Promise<Buffer> {
    while (this.buf.length < n) if (!(await this.fill())) throw new ArchiveError('archive ends early (truncated)');
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
  /** Up to `max` bytes (at least one), for streaming an entry's data. */
  async some(max: number): Promise<Buffer> {
    if (this.buf.length === 0 && !(await this.fill())) throw new ArchiveError('archive ends early (truncated)');
    return this.take(Math.min(max, this.buf.length));
  }
  /** Everything left; true when it is only zeros (tar's end blocks). */
  async restIsZeros(): Promise<boolean> {
    for (;;) {
      if (this.buf.some((b) => b !== 0)) return false;
      this.buf = Buffer.alloc(0);
      if (!(await this.fill())) return true;
    }
  }
}

export function parseHeader(h: Buffer): { name: string; size: number; mode: number; type: string } {
  const field = (at: number, len: number) =>
    h
      .subarray(at, at + len)
      .toString('latin1')
      .replace(/[\0 ]+$/, '');
  const sum = h.reduce((a, b, i) => a + (i >= 148 && i < 156 ? 0x20 : b), 0);
  if (parseInt(field(148, 8), 8) !== sum) throw new ArchiveError('archive is damaged (an entry header is corrupt)');
  const name = h.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
  const size = h[124]! & 0x80 ? h.readUIntBE(126, 6) : parseInt(field(124, 12), 8);
  return { name, size, mode: parseInt(field(100, 8), 8), type: field(156, 1) || '0' };
}

/**
 * Unpacks `archive` into the existing empty directory `into`, checking every entry against the manifest; returns the
 * manifest. `allowed` says which entry names may exist at all. On an `ArchiveError` `into` holds leftovers the
 * caller removes.
 */
export async function readArchive(
  archive: string,
  into: string,
  allowed: (name: string) => boolean,
): Promise<{ manifest: Record<string, unknown>; entries: ManifestEntry[] }> {
  const gunzip = createGunzip();
  const file = createReadStream(archive);
  file.on('error', (err) => gunzip.destroy(err));
  file.pipe(gunzip);
  try {
    return await unpack(new Bytes(gunzip[Symbol.asyncIterator]()), into, allowed);
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code?.startsWith('Z_')) throw new ArchiveError(`archive is damaged (${e.message})`);
    throw err;
  } finally {
    file.destroy();
    gunzip.destroy();
  }
}

async function unpack(bytes: Bytes, into: string, allowed: (name: string) => boolean) {
  const written: ManifestEntry[] = [];
  for (;;) {
    const h = parseHeader(await bytes.take(BLOCK));
    if (!Number.isSafeInteger(h.size) || h.type !== '0') throw new ArchiveError('archive is damaged (bad entry)');
    if (h.name === MANIFEST) {
      const body = await bytes.take(h.size);
      await bytes.take(padding(h.size).length);
      if (!(await bytes.restIsZeros())) throw new ArchiveError('archive has data after its manifest');
      return { manifest: checkManifest(body, written), entries: written };
    }
    if (!allowed(h.name) || written.some((w) => w.name === h.name))
      throw new ArchiveError(`archive holds an unexpected entry "${h.name.slice(0, 100)}"`);
    const target = path.join(into, h.name);
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const fh = await fs.open(target, 'wx', h.mode & 0o600 ? h.mode & 0o777 : 0o600);
    const hash = createHash('sha256');
    try {
      for (let left = h.size; left > 0;) {
        const chunk = await bytes.some(Math.min(left, 1 << 20));
        hash.update(chunk);
        await fh.write(chunk);
        left -= chunk.length;
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    await bytes.take(padding(h.size).length);
    written.push({ name: h.name, size: h.size, sha256: hash.digest('hex') });
  }
}

function checkManifest(body: Buffer, written: ManifestEntry[]): Record<string, unknown> {
  let manifest: { entries?: unknown } & Record<string, unknown>;
  try {
    manifest = JSON.parse(body.toString('utf8')) as typeof manifest;
  } catch {
    throw new ArchiveError('archive is damaged (unreadable manifest)');
  }
  const listed = Array.isArray(manifest.entries) ? (manifest.entries as ManifestEntry[]) : null;
  if (!listed) throw new ArchiveError('archive is damaged (manifest lists no entries)');
  const key = (e: ManifestEntry) => `${e.name}\0${e.size}\0${e.sha256}`;
  const have = new Set(written.map(key));
  const bad = listed.find((e) => !have.has(key(e)));
  if (bad) throw new ArchiveError(`archive is damaged (${bad.name} is missing or differs from the manifest)`);
  if (listed.length !== written.length) throw new ArchiveError('archive holds entries its manifest does not list');
  return manifest;
}
