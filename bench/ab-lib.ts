// The parts bench/ab.ts and bench/ab-create.ts share: two checkouts' servers (bench/ab-server.ts) side by side,
// pinned to core 0, their CPU read over IPC, and the medians of per-pair ratios.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export type Server = { label: string; child: ChildProcess; port: number; token: string };

export function pin(pid: number, cpu: number): void {
  try {
    execFileSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
  } catch {
    // taskset missing or not permitted: unpinned.
  }
}

/** `db`: 'sqlite' (a temp file) or 'pg' (a fresh database on the test server). `AB_CPU_PROF=DIR` profiles it. */
export async function start(label: string, root: string, db: 'sqlite' | 'pg' = 'sqlite'): Promise<Server> {
  const prof = process.env.AB_CPU_PROF;
  const child = fork(path.join(here, 'ab-server.ts'), [root, db], {
    cwd: root,
    execArgv: ['--import', 'tsx', ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${path.join(prof, label)}`] : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const info = await new Promise<{ port: number; token: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; token: string }));
    child.once('exit', (code) => reject(new Error(`${label} server exited with ${code}`)));
  });
  // -a pins every thread; PDF worker threads started later inherit the affinity.
  pin(child.pid!, 0);
  return { label, child, ...info };
}

/** The server process's CPU (user + system, every thread: PDF workers included), µs. */
export const cpuOf = (s: Server): Promise<number> =>
  new Promise((resolve) => {
    s.child.once('message', (m) => {
      const { cpu } = m as { cpu: NodeJS.CpuUsage };
      resolve(cpu.user + cpu.system);
    });
    s.child.send('cpu');
  });

/** Asks the server to stop and waits for it (its temp dir or database is removed on the way out). */
export const stop = (s: Server): Promise<void> =>
  new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve();
    s.child.once('exit', () => resolve());
    s.child.disconnect();
  });

/** Of the finite values: a round that completed no request (a loaded host) gives no ratio. */
export const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
export const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
export const range = (xs: number[]) => {
  const ok = xs.filter(Number.isFinite);
  const dropped = xs.length - ok.length;
  return `${pct(Math.min(...ok))}–${pct(Math.max(...ok))}${dropped ? `; ${dropped} empty rounds left out` : ''}`;
};

/** Rounds of A and B in alternating order (A B, B A, …); B ÷ A per pair, by req/s and by CPU per request. */
export async function interleaved<R extends { rps: number; cpuUs: number }>(
  a: Server,
  b: Server,
  rounds: number,
  round: (s: Server) => Promise<R>,
): Promise<{ rps: number[]; cpu: number[]; a: R[]; b: R[] }> {
  const out = { rps: [] as number[], cpu: [] as number[], a: [] as R[], b: [] as R[] };
  for (let i = 0; i < rounds; i++) {
    const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
    const r1 = await round(first);
    const r2 = await round(second);
    const [ra, rb] = first === a ? [r1, r2] : [r2, r1];
    out.a.push(ra);
    out.b.push(rb);
    out.rps.push(rb.rps / ra.rps);
    out.cpu.push(ra.cpuUs / rb.cpuUs);
  }
  return out;
}
