// Bulk send benchmark on the real app (harness: real port, SQLite, the PDF worker pools) with its worker running
// (runtime.start(): the lease runner polls and is woken on create): one CSV upload of 1,000 rows for the fixtures'
// two-page template, timed from the POST to `completed` as GET /v1/bulk-sends/{id} reports it, with the main
// thread's event-loop delay (p99) measured meanwhile. Targets (issue 24): ≤ 60 s, p99 ≤ 20 ms.
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setRateLimit } from '../src/keys/keys.repo.js';
import { startHarness } from '../src/testing/harness.js';
import { templateBody } from '../src/templates/testing/fixtures.js';
import { bulkCsv } from '../src/templates/testing/bulk.js';

const ms = (n: number) => `${n.toFixed(1)} ms`;

// The machine's share: an idle Node process measures its own event-loop delay over the same time. On a shared
// 2-core machine other processes' load delays every loop; the app's share is its p99 beyond this one.
const IDLE = `const { monitorEventLoopDelay } = require('node:perf_hooks');
const l = monitorEventLoopDelay({ resolution: 5 }); l.enable(); setInterval(() => {}, 1000);
process.stdin.on('data', () => { l.disable(); process.stdout.write(JSON.stringify([l.percentile(99) / 1e6, l.max / 1e6])); process.exit(0); });`;
function idleBaseline() {
  const child = spawn(process.execPath, ['-e', IDLE], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return {
    stop: () =>
      new Promise<[number, number]>((resolve) => {
        child.on('exit', () => resolve(JSON.parse(out) as [number, number]));
        child.stdin.write('x');
      }),
  };
}
const ROWS = Number(process.env.BENCH_BULK_ROWS ?? 1000);

async function main() {
  const h = await startHarness({ start: Date.now() });
  const t = await h.tenant('enterprise');
  await setRateLimit(h.db.kysely, t.keyId, 1_000_000);
  const tpl = await h.request('POST', '/v1/templates', { token: t.token, body: await templateBody() });
  if (tpl.status !== 201) throw new Error(tpl.text);
  const post = (rows: number, run: string) =>
    h.request('POST', `/v1/templates/${tpl.json.id}/bulk-sends`, {
      token: t.token,
      // The fixtures' seats field takes 1–500: row i's seats wrap so every row is good.
      rawBody: bulkCsv(run, rows).replace(/,(pro|basic),(\d+),/g, (_, p, n) => `,${p},${((Number(n) - 1) % 500) + 1},`),
      headers: { 'content-type': 'text/csv' },
    });
  const finished = async (id: string) => {
    for (;;) {
      const r = await h.request('GET', `/v1/bulk-sends/${id}`, { token: t.token });
      const b = r.json.bulk_send;
      if (b.status === 'completed' || b.status === 'failed') return b;
      await new Promise((res) => setTimeout(res, 1000)); // as often as the dashboard page reloads
    }
  };
  h.runtime.start();
  // Worker start-up (pdf.js, pdf-lib) is not part of the send: a 5-row warm-up first.
  await finished((await post(5, 'warm')).json.bulk_send.id);

  const idle = idleBaseline();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const start = performance.now();
  const created = await post(ROWS, 'bench');
  if (created.status !== 202) throw new Error(created.text);
  const accepted = performance.now() - start;
  const uploadMax = loop.max / 1e6;
  const b = await finished(created.json.bulk_send.id);
  const took = performance.now() - start;
  loop.disable();
  const [idleP99, idleMax] = await idle.stop();

  const p99 = loop.percentile(99) / 1e6;
  console.log(`\nBulk send (${ROWS} rows, SQLite, worker running)`);
  console.log('| measure | figure |');
  console.log('|---|---:|');
  console.log(`| upload answered (202) | ${ms(accepted)} |`);
  console.log(`| upload to completed | ${(took / 1000).toFixed(1)} s (${b.sent} sent, ${b.failed} failed) |`);
  console.log(`| rows per second | ${(ROWS / (took / 1000)).toFixed(1)} |`);
  console.log(
    `| event-loop delay: the upload's longest | ${ms(uploadMax)} |\n| event-loop delay meanwhile | p50 ${ms(loop.percentile(50) / 1e6)}, p99 ${ms(p99)}, max ${ms(loop.max / 1e6)} |`,
  );
  console.log(`| an idle process meanwhile (the machine) | p99 ${ms(idleP99)}, max ${ms(idleMax)} |`);
  console.log(
    `targets: 1,000 rows <= 60 s: ${took <= 60_000 ? 'met' : 'MISSED'}; event-loop p99 <= 20 ms: ${p99 <= 20 ? 'met' : 'MISSED'}`,
  );
  if (b.sent !== ROWS) throw new Error(`expected ${ROWS} sent: ${JSON.stringify({ ...b, rows: undefined })}`);
  await h.close();
}

await main();
