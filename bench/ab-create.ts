// `node --import tsx bench/ab-create.ts OTHER_CHECKOUT [THIS_CHECKOUT]` (`npm run bench:ab-create -- …`): creating
// signing requests, this code against another checkout's (issue 25: against `ab93edf`). Both API servers
// (bench/ab-server.ts, API only: no seal, mail or delivery job runs on either side, so only the create call is
// measured) run at once pinned to core 0, their PDF worker threads too; the load comes from this process on core 1:
// CLIENTS connections, each POSTing `POST /v1/signing-requests` with a one-page PDF (base64 `file`, `auto_append`,
// one signer, no Idempotency-Key, so every request creates a document) back to back. Rounds alternate A B, B A, …
// on SQLite and then on PostgreSQL; prints the medians of the per-pair ratios (req/s, server CPU per request) and
// each side's median req/s and CPU ms per document. AB_DBS=sqlite (or pg) runs one database only.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { makePdf } from '../src/documents/pdf/testing/fixtures.js';
import { cpuOf, interleaved, median, pct, pin, range, start, stop, type Server } from './ab-lib.js';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 8);
const ROUND_S = Number(process.env.AB_ROUND_S ?? 5);
const CLIENTS = 8;
const DBS = (process.env.AB_DBS ?? 'sqlite,pg').split(',') as Array<'sqlite' | 'pg'>;
const here = path.dirname(fileURLToPath(import.meta.url));

/** The body every request sends: the same one-page PDF, one signer. */
export async function createBody(): Promise<string> {
  const pdf = await makePdf({ pages: 1, text: [['Bench agreement', 'Signed by the parties below.']] });
  return JSON.stringify({
    signers: [{ role: 'signer', email: 'bench@example.com', name: 'Bench Signer' }],
    file: { name: 'bench.pdf', content_base64: Buffer.from(pdf).toString('base64') },
    placement: 'auto_append',
    title: 'Bench agreement',
  });
}

export type CreateRound = { rps: number; cpuUs: number; p50: number; total: number };

export async function createRound(s: Server, body: string, seconds = ROUND_S): Promise<CreateRound> {
  const before = await cpuOf(s);
  const r = await autocannon({
    url: `http://127.0.0.1:${s.port}/v1/signing-requests`,
    method: 'POST',
    connections: CLIENTS,
    duration: seconds,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body,
  });
  const used = (await cpuOf(s)) - before;
  if (r.non2xx || r.errors) throw new Error(`${s.label} create: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return {
    rps: r.requests.total / r.duration,
    cpuUs: used / Math.max(1, r.requests.total),
    p50: r.latency.p50,
    total: r.requests.total,
  };
}

const ms = (us: number) => (us / 1000).toFixed(1);

async function main(): Promise<void> {
  const [other, self = path.join(here, '..')] = process.argv.slice(2);
  if (!other) throw new Error('usage: node --import tsx bench/ab-create.ts OTHER_CHECKOUT [THIS_CHECKOUT]');
  pin(process.pid, 1);
  const body = await createBody();
  console.log(
    `A = ${path.resolve(other)}, B = ${path.resolve(self)}; ${ROUNDS} pairs of ${ROUND_S} s rounds, ${CLIENTS} clients, ` +
      `one-page PDF (${body.length} B body); load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  for (const db of DBS) {
    const a = await start('other', path.resolve(other), db);
    const b = await start('this', path.resolve(self), db);
    try {
      for (const s of [a, b]) await createRound(s, body, 2); // warm-up: the PDF worker starts and loads its libraries
      const r = await interleaved(a, b, ROUNDS, (s) => createRound(s, body));
      const side = (xs: CreateRound[]) =>
        `${median(xs.map((x) => x.rps)).toFixed(1)} req/s, ${ms(median(xs.map((x) => x.cpuUs)))} ms CPU/doc, p50 ${median(xs.map((x) => x.p50))} ms`;
      console.log(
        `${db} POST /v1/signing-requests: B ÷ A by req/s median ${pct(median(r.rps))} (${range(r.rps)}); ` +
          `by CPU per request (A ÷ B) median ${pct(median(r.cpu))} (${range(r.cpu)})\n` +
          `  A: ${side(r.a)}\n  B: ${side(r.b)}\n  load ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}`,
      );
    } finally {
      await Promise.all([stop(a), stop(b)]);
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
