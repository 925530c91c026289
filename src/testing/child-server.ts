// The `signet` command as a child process, for tests that need the real process: a clean environment (nothing
// from the caller's DATABASE_URL, REDIS_URL or PORT leaks in), free loopback ports, `signet serve` started and
// waited for, and one-shot commands.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'signet.js');

export const baseEnv = (dataDir: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? os.tmpdir(),
  TMPDIR: os.tmpdir(),
  DATA_DIR: dataDir,
  SIGNET_ALLOW_PRIVATE_NETWORK: '1',
  LOG_LEVEL: 'silent',
});

export type Run = { code: number; stdout: string; stderr: string };

/** Runs `signet …` to the end. */
export function runSignet(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...baseEnv(dataDir), ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs `signet … --json` and returns its one JSON object; throws on a failure or anything else printed. */
export async function signetJson(dataDir: string, args: string[]): Promise<any> {
  const r = await runSignet(dataDir, [...args, '--json']);
  const lines = r.stdout.trim().split('\n');
  if (r.code !== 0 || r.stderr !== '' || lines.length !== 1) {
    throw new Error(`signet ${args.join(' ')}: exit ${r.code}, stderr ${r.stderr}, stdout ${r.stdout}`);
  }
  return JSON.parse(lines[0]!);
}

/** A loopback port nothing listens on (bound once, then released). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null; at: number };

export type ChildServer = { port: number; child: ChildProcess; exited: Promise<Exit>; log(): string };

/** `signet serve` (API and worker unless `args` say otherwise) on a free loopback port, once it logs that it listens. */
export async function startServer(
  dataDir: string,
  o: { args?: string[]; env?: Record<string, string> } = {},
): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', ...(o.args ?? [])], {
    cwd: ROOT,
    env: { ...baseEnv(dataDir), HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (log.includes('"msg":"signet listening"')) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((e) => reject(new Error(`signet serve exited early (${e.code ?? e.signal}): ${log}`)));
    // It logs that it listens at level info: a LOG_LEVEL above that would leave this waiting for ever. The timer
    // guards the start only: a server that started lives as long as its test needs it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`signet serve did not say it listens within 60 s: ${log}`));
    }, 60_000);
    timer.unref();
    const started = () => {
      if (log.includes('"msg":"signet listening"')) {
        clearTimeout(timer);
        child.stdout!.off('data', started);
      }
    };
    child.stdout!.on('data', started);
  });
  return { port, child, exited, log: () => log };
}
