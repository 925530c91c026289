// The hot paths of issue 25 point 2, each measured one request at a time against the real app on a seeded history:
// latency per call (p50, p99), not throughput, because the question is what the size does to one call.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Harness } from '../src/testing/harness.js';
import type { SeedSummary } from '../src/testing/seed/seed.js';
import { RETIRED_TITLE } from '../src/testing/seed/history-parts.js';
import { cursorAtDepth, makeDeliveriesDue, spreadDocumentIds } from '../src/testing/seed/seed.repo.js';
import { makePdf } from '../src/documents/pdf/testing/fixtures.js';
import { insertSession } from '../src/dashboard/people.repo.js';
import { SESSION_COOKIE } from '../src/dashboard/session-cookie.js';
import { newLinkToken } from '../src/lib/tokens.js';
import { claimDue, recordOutcomes } from '../src/webhooks/deliveries.repo.js';

export type Timing = { p50: number; p99: number; n: number };
export type PathResult = { path: string; t: Timing } | { path: string; error: string };

const WARMUP = 10;

function stats(ms: number[]): Timing {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), n: s.length };
}

/** Runs `fn(i)` WARMUP + n times; times the last n. A call that does not give the expected status fails the path. */
async function timed(n: number, fn: (i: number) => Promise<void>): Promise<Timing> {
  for (let i = 0; i < WARMUP; i++) await fn(i);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(WARMUP + i);
    ms.push(performance.now() - t0);
  }
  return stats(ms);
}

const expect = (path: string, status: number, want: number, text: string) => {
  if (status !== want) throw new Error(`${path}: ${status} ${text.slice(0, 200)}`);
};

export async function measurePaths(h: Harness, s: SeedSummary, samples: number): Promise<PathResult[]> {
  const ws = s.workspaces[0]!.id;
  const token = s.keys[0]!.plaintext;
  const prefixes = Array.from({ length: 200 }, () => randomBytes(6).toString('hex'));
  const anyIds = await spreadDocumentIds(h.db.kysely, ws, prefixes);
  const completed = await spreadDocumentIds(h.db.kysely, ws, prefixes.slice(0, 60), 'completed');
  const pdf = Buffer.from(await makePdf({ text: [['Agreement', 'Please sign below.']] })).toString('base64');
  const cookie = await dashboardSession(h, s);
  const deep = await cursorAtDepth(h.db.kysely, ws, 0.6);
  const key = s.keys[0]!;
  const template = s.templates.find((t) => t.workspaceId === ws)!;
  // Purged documents are gone for the paths after, and seeded documents share their PDFs (a purge deletes them):
  // the purge runs after every path that reads a PDF, on documents none of them reads.
  const purgePrefixes = Array.from({ length: samples + WARMUP + 20 }, () => randomBytes(6).toString('hex'));
  const purgeable = (await spreadDocumentIds(h.db.kysely, ws, purgePrefixes, 'completed')).filter(
    (id) => !completed.includes(id),
  );

  const api = (method: string, path: string, want: number, body?: unknown) => async () => {
    const r = await h.request(method, path, { token, body });
    expect(path, r.status, want, r.text);
  };
  const page = (path: string) => async () => {
    const r = await h.request('GET', path, { headers: { cookie, accept: 'text/html' } });
    expect(path, r.status, 200, r.text);
  };
  const paths: [string, number, (i: number) => Promise<void>][] = [
    ['GET /v1/documents/{id}', samples, (i) => api('GET', `/v1/documents/${anyIds[i % anyIds.length]}`, 200)()],
    [
      'POST /v1/signing-requests (1 page)',
      samples,
      (i) =>
        api('POST', '/v1/signing-requests', 201, {
          signers: [{ role: 'signer', email: `bench.${i}@example.com`, name: 'Bench Signer' }],
          file: { name: 'one-page.pdf', content_base64: pdf },
          placement: 'auto_append',
        })(),
    ],
    [
      'GET /v1/documents/{id}/signed',
      samples,
      (i) => api('GET', `/v1/documents/${completed[i % completed.length]}/signed`, 200)(),
    ],
    ['GET /v1/hooks', samples, api('GET', '/v1/hooks', 200)],
    ['GET /v1/me', samples, api('GET', '/v1/me', 200)],
    [
      'POST /v1/templates/{id}/instantiate',
      samples,
      (i) =>
        api('POST', `/v1/templates/${template.templateId}/instantiate`, 201, {
          recipients: [{ slot: 'signer', name: 'Bench Recipient', email: `recipient.${i}@example.com` }],
          field_values: {},
        })(),
    ],
    [
      'GET /sign/{token}',
      samples,
      async (i) => {
        const t = s.signerTokens[i % s.signerTokens.length]!;
        const r = await h.request('GET', `/sign/${t.token}`);
        expect('/sign', r.status, 200, r.text);
      },
    ],
    ['dashboard documents', samples, page('/dashboard/documents')],
    ['dashboard documents ?status=completed', samples, page('/dashboard/documents?status=completed')],
    ['dashboard documents ?q=NDA', samples, page('/dashboard/documents?q=NDA')],
    // Nothing among the newest documents matches: the page comes from the text index's matches in the history.
    [
      'dashboard documents ?q=<retired title>',
      samples,
      page(`/dashboard/documents?q=${encodeURIComponent(RETIRED_TITLE)}`),
    ],
    ['dashboard documents deep page (60%)', samples, page(`/dashboard/documents?before=${deep}`)],
    ['dashboard key-use page', samples, page(`/dashboard/developers/keys/${key.keyId}`)],
    // The workspace-wide hooks only: the live callback hooks (which GET /v1/hooks lists) grow with the documents.
    ['dashboard webhooks page', samples, page('/dashboard/developers/webhooks')],
    // The purge-documents job's and DELETE /v1/documents/{id}'s work: one ended document's rows, in one transaction.
    [
      'DELETE /v1/documents/{id} (purge)',
      Math.min(samples, purgeable.length - WARMUP),
      (i) => api('DELETE', `/v1/documents/${purgeable[i]}`, 200)(),
    ],
  ];
  const out: PathResult[] = [];
  for (const [path, n, fn] of paths) out.push(await run(path, () => timed(n, fn)));
  out.push(...(await deliveryPaths(h, ws, samples)));
  out.push(...(await jobPaths(h, samples)));
  return out;
}

async function run(path: string, f: () => Promise<Timing>): Promise<PathResult> {
  process.stdout.write(`    ${path} … `);
  try {
    const t = await f();
    console.log(`p50 ${t.p50.toFixed(2)} ms, p99 ${t.p99.toFixed(2)} ms (n=${t.n})`);
    return { path, t };
  } catch (err) {
    console.log(`failed: ${(err as Error).message}`);
    return { path, error: (err as Error).message };
  }
}

/** A signed-in owner of the dominant workspace: a session row as sign-in writes it, its token as the cookie. */
async function dashboardSession(h: Harness, s: SeedSummary): Promise<string> {
  const u = s.users[0]!;
  const tk = newLinkToken();
  const now = h.clock.now();
  await insertSession(h.db.kysely, {
    token_hash: tk.hash,
    user_id: u.userId,
    workspace_id: u.workspaceId,
    created_at: now,
    last_seen_at: now,
    revoked_at: null,
    ip: null,
    user_agent: null,
  });
  return `${SESSION_COOKIE}=${tk.token}`;
}

/**
 * The dispatcher's two statements: claim a batch of 50 due deliveries, record their outcomes; `rounds` times (at least
 * 30), so that a p99 is not simply the slowest call.
 */
async function deliveryPaths(h: Harness, ws: string, rounds: number): Promise<PathResult[]> {
  const BATCH = 50;
  const ROUNDS = Math.max(30, rounds);
  await makeDeliveriesDue(h.db.kysely, ws, BATCH * (ROUNDS + 2), h.clock.now());
  const claims: number[] = [];
  const records: number[] = [];
  for (let i = 0; i < ROUNDS + 2; i++) {
    const now = h.clock.now();
    let t0 = performance.now();
    const got = await claimDue(h.db, { now, workerId: 'bench', leaseMs: 60_000, limit: BATCH });
    const claimMs = performance.now() - t0;
    t0 = performance.now();
    await recordOutcomes(
      h.db,
      'bench',
      got.map((d) => ({
        kind: 'attempt' as const,
        deliveryId: d.id,
        attemptsAtClaim: d.attempts,
        ok: true,
        startedAt: now,
        durationMs: 20,
        statusCode: 200,
        responseBody: 'ok',
        error: null,
        nextAttemptAt: null,
        recordedAt: now,
      })),
    );
    const recordMs = performance.now() - t0;
    if (got.length !== BATCH) return [{ path: 'delivery claim (50)', error: `claimed ${got.length}` }];
    if (i >= 2) {
      claims.push(claimMs);
      records.push(recordMs);
    }
  }
  const res: PathResult[] = [
    { path: 'delivery claim (50)', t: stats(claims) },
    { path: 'delivery record (50)', t: stats(records) },
  ];
  for (const r of res)
    if ('t' in r) console.log(`    ${r.path} … p50 ${r.t.p50.toFixed(2)} ms, p99 ${r.t.p99.toFixed(2)} ms`);
  return res;
}

const JOBS = ['expire-requests', 'send-reminders', 'expire-reviews', 'prune-key-uses'];
/**
 * Each scheduled job once over the seeder's fixed due sets (p50 = p99 = the one run: an anecdote at a few ms), then
 * `emptyRuns` more with nothing left due (a distribution: the scans that find the work, the part that could grow).
 */
async function jobPaths(h: Harness, emptyRuns: number): Promise<PathResult[]> {
  const out: PathResult[] = [];
  for (const job of JOBS) {
    out.push(
      await run(`job ${job}`, async () => {
        const t0 = performance.now();
        const r = await h.runtime.runJob(job);
        const ms = performance.now() - t0;
        process.stdout.write(`${JSON.stringify(r)} `);
        return { p50: ms, p99: ms, n: 1 };
      }),
    );
  }
  for (const job of JOBS) {
    out.push(
      await run(`job ${job}, nothing due`, async () => {
        const ms: number[] = [];
        for (let i = 0; i < emptyRuns; i++) {
          const t0 = performance.now();
          await h.runtime.runJob(job);
          ms.push(performance.now() - t0);
        }
        return stats(ms);
      }),
    );
  }
  return out;
}
