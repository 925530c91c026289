// `npm run bench:ab -- OTHER_CHECKOUT [THIS_CHECKOUT]`: this code against another checkout's (say, a worktree of the
// commit before a change), on the hot paths GET /v1/hooks and GET /v1/me over SQLite. Both servers run at once,
// pinned to core 0; the load comes from this process on core 1; short rounds alternate A B B A … so drifting load on
// the host hits both alike. Prints the medians of the per-pair ratios (req/s, and server CPU per request) with their
// ranges. Run it twice with the checkouts swapped, and once with the same checkout on both sides, to see the noise.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 16);
const ROUND_S = 3;
const PATHS = ['/v1/hooks', '/v1/me'];
const here = path.dirname(fileURLToPath(import.meta.url));

type Server = { label: string; child: ChildProcess; port: number; token: string };

function pin(pid: number, cpu: number): void {
  try {
    execFileSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
  } catch {
    // taskset missing or not permitted: unpinned.
  }
}

async function start(label: string, root: string): Promise<Server> {
  const child = fork(path.join(here, 'ab-server.ts'), [root], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const info = await new Promise<{ port: number; token: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; token: string }));
    child.once('exit', (code) => reject(new Error(`${label} server exited with ${code}`)));
  });
  pin(child.pid!, 0);
  return { label, child, ...info };
}

const cpuOf = (s: Server): Promise<number> =>
  new Promise((resolve) => {
    s.child.once('message', (m) => {
      const { cpu } = m as { cpu: NodeJS.CpuUsage };
      resolve(cpu.user + cpu.system);
    });
    s.child.send('cpu');
  });

async function round(s: Server, p: string, seconds = ROUND_S): Promise<{ rps: number; cpuUs: number }> {
  const before = await cpuOf(s);
  const r = await autocannon({
    url: `http://127.0.0.1:${s.port}${p}`,
    connections: 50,
    duration: seconds,
    headers: { authorization: `Bearer ${s.token}` },
  });
  const used = (await cpuOf(s)) - before;
  if (r.non2xx || r.errors) throw new Error(`${s.label} ${p}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, cpuUs: used / Math.max(1, r.requests.total) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const range = (xs: number[]) => `${pct(Math.min(...xs))}–${pct(Math.max(...xs))}`;

const [other, self = path.join(here, '..')] = process.argv.slice(2);
if (!other) throw new Error('usage: npm run bench:ab -- OTHER_CHECKOUT [THIS_CHECKOUT]');
pin(process.pid, 1);
const a = await start('other', path.resolve(other));
const b = await start('this', path.resolve(self));
console.log(`A = ${path.resolve(other)}, B = ${path.resolve(self)}; ${ROUNDS} pairs of ${ROUND_S} s rounds per path`);
try {
  for (const p of PATHS) {
    for (const s of [a, b]) await round(s, p, 2); // warm-up
    const rps: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
      const r1 = await round(first, p);
      const r2 = await round(second, p);
      const [ra, rb] = first === a ? [r1, r2] : [r2, r1];
      rps.push(rb.rps / ra.rps);
      cpu.push(ra.cpuUs / rb.cpuUs);
    }
    console.log(
      `${p}: B ÷ A by req/s median ${pct(median(rps))} (${range(rps)}); ` +
        `by CPU per request (A µs ÷ B µs) median ${pct(median(cpu))} (${range(cpu)})`,
    );
  }
} finally {
  a.child.disconnect();
  b.child.disconnect();
}
