// Test helpers around the independent verifiers (openssl, pdfsig/NSS, qpdf): every check in the PKI and seal
// tests is made by one of these tools, never by our own verification code.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type RunResult = { code: number; stdout: string; stderr: string };

/** Runs a command to completion; never throws on a non-zero exit (tests assert on the code). */
export function run(cmd: string, args: string[], input?: Uint8Array): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') return reject(err); // e.g. ENOENT: tool missing
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input) child.stdin!.end(input);
  });
}

export async function tempDir(prefix = 'signet-pki-'): Promise<{ path: string; cleanup(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** An NSS database trusting `caPem` for signing, for `pdfsig -nssdir`. */
export async function nssDbTrusting(dir: string, caPem: string): Promise<string> {
  const db = `sql:${dir}`;
  const caFile = join(dir, 'trusted-ca.pem');
  await writeFile(caFile, caPem);
  for (const args of [
    ['-N', '--empty-password', '-d', db],
    ['-A', '-n', 'signet-ca', '-t', 'CT,C,C', '-i', caFile, '-d', db],
  ]) {
    const r = await run('certutil', args).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT'
        ? new Error('certutil not found: install libnss3-tools (Debian) for the pdfsig trust checks')
        : err;
    });
    if (r.code !== 0) throw new Error(`certutil ${args[0]} failed: ${r.stderr}`);
  }
  return db;
}
