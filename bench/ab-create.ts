// `node --import tsx bench/ab-create.ts OTHER_CHECKOUT [THIS_CHECKOUT]` (`npm run bench:ab-create -- …`): creating
// signing requests, this code against another checkout's (issue 25: against `ab93edf`). Both API servers
// (bench/ab-server.ts, API only: no seal, mail or delivery job runs on either side, so only the create call is
// measured) run at once pinned to core 0, their PDF worker threads too; the load comes from this process on core 1:
// CLIENTS connections, each POSTing `POST /v1/signing-requests` with a one-page PDF (base64 `file`, `auto_append`,
// one signer with a name of its own, no Idempotency-Key, so every request creates a document) back to back. Names
// differ per request (letters drawn at random) so that a cache keyed by text, such as the font subsets of the
// appended signature page, cannot flatter the figures. Rounds alternate A B, B A, …
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

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const word = (n: number) =>
  Array.from({ length: n }, () => LETTERS[Math.floor(Math.random() * LETTERS.length)]).join('');

/** The body of one request: the same one-page PDF, one signer with a new name. */
export type CreateBody = () => string;
export async function createBody(): Promise<CreateBody> {
  const pdf = await makePdf({ pages: 1, text: [['Bench agreement', 'Signed by the parties below.']] });
  const file = { name: 'bench.pdf', content_base64: Buffer.from(pdf).toString('base64') };
  return () =>
    JSON.stringify({
      signers: [{ role: 'signer', email: 'bench@example.com', name: `${word(6)} ${word(8)}` }],
      file,
      placement: 'auto_append',
      title: 'Bench agreement',
    });
}

export type CreateRound = { rps: number; cpuUs: number; p50: number; total: number };

export async function createRound(s: Server, body: CreateBody, seconds = ROUND_S): Promise<CreateRound> {
  const before = await cpuOf(s);
  const r = await autocannon({
    url: `http://127.0.0.1:${s.port}`,
    connections: CLIENTS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/signing-requests',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: body() }),
      },
    ],
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
      `one-page PDF (${body().length} B body); load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  for (const db of DBS) {
    const a = await start('other', path.resolve(other), db);
    const b = await start('this', path.resolve(self), db);
    try {
      // Warm-up until a round completes requests: the PDF worker starts and loads its libraries (seconds when loaded).
      for (const s of [a, b]) for (let i = 0; i < 5 && (await createRound(s, body, 3)).total === 0; i++);
      const r = await interleaved(a, b, ROUNDS, (s) => createRound(s, body));
      const side = (xs: CreateRound[]) =>
        `${median(xs.map((x) => x.rps)).toFixed(1)} req/s, ${ms(median(xs.map((x) => x.cpuUs)))} ms CPU/doc, p50 ${median(xs.map((x) => x.p50))} ms`;
      console.log(
        `${db} POST /v1/signing-requests: B ÷ A by req/s median ${pct(median(r.rps))} (${range(r.rps)}); ` +
          `by CPU per request (A ÷ B) median ${pct(median(r.cpu))} (${range(r.cpu)})\n` +
          `  A: ${side(r.a)}\n  B: ${side(r.b)}\n` +
          `  rounds' req/s A ${r.a.map((x) => x.rps.toFixed(1)).join(' ')}; B ${r.b.map((x) => x.rps.toFixed(1)).join(' ')}\n  load ${os
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
