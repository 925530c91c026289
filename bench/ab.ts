// `npm run bench:ab -- OTHER_CHECKOUT [THIS_CHECKOUT]`: this code against another checkout's (say, a worktree of the
// commit before a change), on the hot paths GET /v1/hooks and GET /v1/me over SQLite. Both servers run at once,
// pinned to core 0; the load comes from this process on core 1; short rounds alternate A B B A … so drifting load on
// the host hits both alike. Prints the medians of the per-pair ratios (req/s, and server CPU per request) with their
// ranges. Run it twice with the checkouts swapped, and once with the same checkout on both sides, to see the noise.
// Creating documents has its own: bench/ab-create.ts.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuOf, interleaved, median, pct, pin, range, start, stop, type Server } from './ab-lib.js';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 16);
const ROUND_S = 3;
const PATHS = ['/v1/hooks', '/v1/me'];
const here = path.dirname(fileURLToPath(import.meta.url));

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

const [other, self = path.join(here, '..')] = process.argv.slice(2);
if (!other) throw new Error('usage: npm run bench:ab -- OTHER_CHECKOUT [THIS_CHECKOUT]');
pin(process.pid, 1);
const a = await start('other', path.resolve(other));
const b = await start('this', path.resolve(self));
console.log(`A = ${path.resolve(other)}, B = ${path.resolve(self)}; ${ROUNDS} pairs of ${ROUND_S} s rounds per path`);
try {
  for (const p of PATHS) {
    for (const s of [a, b]) await round(s, p, 2); // warm-up
    const { rps, cpu } = await interleaved(a, b, ROUNDS, (s) => round(s, p));
    console.log(
      `${p}: B ÷ A by req/s median ${pct(median(rps))} (${range(rps)}); ` +
        `by CPU per request (A µs ÷ B µs) median ${pct(median(cpu))} (${range(cpu)})`,
    );
  }
} finally {
  await Promise.all([stop(a), stop(b)]);
}
