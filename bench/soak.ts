// `npm run soak [-- --minutes N]`: mixed traffic against the local cluster (scripts/cluster.sh: HAProxy, two API
// instances, two workers, PostgreSQL, Redis) for N minutes (10 by default): API reads, signing flows from upload to
// sealed document, and the webhook deliveries they cause, to a receiver on loopback. Prints throughput, p50/p99
// latency, errors and each Signet process's RSS after warm-up and at the end. Exits 1 when any request failed or a
// process grew by 15% or more after warm-up. Traffic goes to 127.0.0.1 only; the cluster is stopped at the end.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { makePdf } from '../src/documents/pdf/testing/fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const MINUTES = Number(arg('minutes') ?? process.env.SOAK_MINUTES ?? 10);
if (!(MINUTES > 0 && MINUTES <= 24 * 60)) throw new Error('--minutes must be a number of minutes above 0');
const DURATION_MS = MINUTES * 60_000;
/** RSS is compared from here on: the first 20% of the run (at most 2 minutes) warms caches, pools and JITs. */
const WARM_UP_MS = Math.min(120_000, DURATION_MS * 0.2);
const RSS_GROWTH_LIMIT = 0.15;
const READERS = 4;
const SIGNERS = 2;
const PORT_BASE = Number(process.env.CLUSTER_PORT_BASE ?? 7700);
const CLUSTER_DIR = process.env.CLUSTER_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'signet-soak-'));
const env = { ...process.env, CLUSTER_DIR, CLUSTER_PORT_BASE: String(PORT_BASE) };
const BASE = `http://127.0.0.1:${PORT_BASE}`;
const DATABASE_URL = `postgres://postgres@127.0.0.1:${PORT_BASE + 10}/signet`;

const cluster = (...args: string[]) =>
  execFileSync('bash', [path.join(ROOT, 'scripts/cluster.sh'), ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    .toString()
    .trim();
const cli = (...args: string[]) =>
  JSON.parse(
    execFileSync(process.execPath, [path.join(ROOT, 'bin/signet.js'), ...args, '--json'], {
      env: { ...process.env, DATABASE_URL, DATA_DIR: path.join(CLUSTER_DIR, 'data'), LOG_LEVEL: 'warn' },
    }).toString(),
  );

/** A parsed answer, read loosely: the soak only picks ids out of it. */
type Json = { [k: string]: Json } | Json[] | string | number | boolean | null;

type Stat = { n: number; errors: number; ms: number[]; statuses: Map<string, number> };
const stats = new Map<string, Stat>();
const note = (name: string, ms: number, ok: boolean, status: string) => {
  let s = stats.get(name);
  if (!s) stats.set(name, (s = { n: 0, errors: 0, ms: [], statuses: new Map() }));
  s.n++;
  s.ms.push(ms);
  if (!ok) {
    s.errors++;
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
  }
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
/**
 * Signers come from their own addresses (127.0.0.2 to 127.0.0.201), as people do: HAProxy forwards each one and the
 * per-address limit on signer pages counts them apart. The API client stays on 127.0.0.1.
 */
const SIGNER_ADDRESSES = 200;
const signerAgents = Array.from(
  { length: SIGNER_ADDRESSES },
  (_, i) => new http.Agent({ keepAlive: true, maxSockets: 2, localAddress: `127.0.0.${i + 2}` }),
);
/** One request; the latency is recorded under `name` and anything but `expect` counts as an error. */
async function call(
  name: string,
  method: string,
  url: string,
  o: { token?: string; body?: unknown; expect?: number; agent?: http.Agent } = {},
): Promise<{ status: number; json: Json }> {
  const body = o.body === undefined ? undefined : JSON.stringify(o.body);
  const t0 = performance.now();
  try {
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method,
          agent: o.agent ?? agent,
          headers: {
            ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          timeout: 30_000,
        },
        (r) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (c) => (text += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
          r.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });
    const ok = res.status === (o.expect ?? 200);
    note(name, performance.now() - t0, ok, String(res.status));
    let json: Json = null;
    try {
      json = JSON.parse(res.text);
    } catch {
      // pages and PDFs are not JSON
    }
    return { status: res.status, json };
  } catch (err) {
    note(name, performance.now() - t0, false, (err as Error).message);
    return { status: 0, json: null };
  }
}

function rssOf(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The Signet processes of the cluster, by name, from its pid files. */
function signetPids(): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of fs.readdirSync(CLUSTER_DIR)) {
    const m = /^((?:api|worker)\d+)\.pid$/.exec(f);
    if (m) out.set(m[1]!, Number(fs.readFileSync(path.join(CLUSTER_DIR, f), 'utf8').trim()));
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (n: number, d = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '–';
const mb = (b: number | null | undefined) => (b == null ? '–' : `${fmt(b / 2 ** 20, 1)} MB`);

async function main(): Promise<number> {
  console.log(
    `Signet soak — ${MINUTES} min, node ${process.version}, ${os.cpus().length} cores, cluster in ${CLUSTER_DIR}`,
  );
  console.log(cluster('up'));
  const received = new Map<string, number>(); // event id → deliveries
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const id = req.headers['x-service-event-id'];
      if (typeof id === 'string') received.set(id, (received.get(id) ?? 0) + 1);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const rxUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const db = new pg.Client(DATABASE_URL);
  await db.connect();
  try {
    // Enterprise: no monthly document cap (business stops at 1,000 documents with 402).
    const ws = cli('workspace', 'create', '--name', 'Soak', '--tier', 'enterprise').workspace;
    const key = cli('key', 'create', '--workspace', ws.id);
    cli('key', 'set-limit', key.key.id, '1000000');
    const token: string = key.plaintext;
    const hook = await call('setup', 'POST', `${BASE}/v1/hooks`, {
      token,
      body: { target_url: rxUrl },
      expect: 201,
    });
    if (hook.status !== 201) throw new Error(`hook creation failed: ${hook.status}`);
    const pdf = Buffer.from(await makePdf({ pages: 2, text: [['Soak agreement'], ['Page two']] })).toString('base64');

    const started = performance.now();
    const until = started + DURATION_MS;
    let flows = 0;
    const rss = new Map<string, { warm?: number | null; end?: number | null; max: number }>();
    const sample = (phase: 'warm' | 'end' | null) => {
      for (const [name, pid] of signetPids()) {
        const r = rssOf(pid);
        const e = rss.get(name) ?? { max: 0 };
        if (r !== null) e.max = Math.max(e.max, r);
        if (phase) e[phase] = r;
        rss.set(name, e);
      }
    };
    sample(null);
    const sampler = setInterval(() => sample(null), 5_000);
    const warmTimer = setTimeout(() => sample('warm'), WARM_UP_MS);

    const reader = async () => {
      for (let i = 0; performance.now() < until; i++) {
        if (i % 3 === 2) await call('GET /v1/me', 'GET', `${BASE}/v1/me`, { token });
        else await call('GET /v1/hooks', 'GET', `${BASE}/v1/hooks`, { token });
      }
    };
    const signer = async (n: number) => {
      for (let i = 0; performance.now() < until; i++) {
        const email = `soak.${n}.${i}.${Date.now()}@example.com`;
        const created = await call('POST /v1/signing-requests', 'POST', `${BASE}/v1/signing-requests`, {
          token,
          expect: 201,
          body: {
            signers: [{ role: 'signer', email, name: `Soak ${n}-${i}` }],
            file: { name: 'soak.pdf', content_base64: pdf },
            placement: 'auto_append',
            title: `Soak ${n}-${i}`,
          },
        });
        if (created.status !== 201) {
          await sleep(100); // counted as an error; not retried in a tight loop
          continue;
        }
        // The invitation is in the mail outbox (no SMTP here); the link is taken from it as a signer would.
        let link: string | undefined;
        for (let tries = 0; tries < 200 && !link; tries++) {
          const r = await db.query<{ text: string }>('select text from mail_outbox where to_email = $1', [email]);
          link = /\/sign\/([A-Za-z0-9_-]{43})/.exec(r.rows[0]?.text ?? '')?.[1];
          if (!link) await sleep(50);
        }
        if (!link) {
          note('signer link mailed', 10_000, false, 'no link within 10 s');
          continue;
        }
        const person = signerAgents[(i * SIGNERS + n) % SIGNER_ADDRESSES]!;
        await call('GET /sign/<token>', 'GET', `${BASE}/sign/${link}`, { agent: person });
        await call('POST /sign/<token>/view', 'POST', `${BASE}/sign/${link}/view`, { agent: person });
        const signed = await call('POST /sign/<token>/sign', 'POST', `${BASE}/sign/${link}/sign`, {
          body: { signature: { type: 'typed', text: `Soak ${n}-${i}` } },
          agent: person,
        });
        if (signed.status === 200) flows++;
        await call(
          'GET /v1/documents/{id}',
          'GET',
          `${BASE}/v1/documents/${(created.json as { document_id: string }).document_id}`,
          { token },
        );
      }
    };
    await Promise.all([
      ...Array.from({ length: READERS }, reader),
      ...Array.from({ length: SIGNERS }, (_, n) => signer(n)),
    ]);
    const elapsedS = (performance.now() - started) / 1000;
    clearTimeout(warmTimer);
    clearInterval(sampler);
    sample('end');

    // Deliveries still on their way are given a bounded minute to arrive.
    const expected = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            "select count(*) as n from deliveries where hook_id = $1 and status in ('pending', 'retrying')",
            [(hook.json as { id: string }).id],
          )
        ).rows[0]!.n,
      );
    let waiting = await expected().catch(() => -1);
    for (let i = 0; i < 120 && waiting > 0; i++) {
      await sleep(500);
      waiting = await expected().catch(() => -1);
    }
    const events = Number(
      (
        await db.query<{ n: string }>('select count(*) as n from deliveries where hook_id = $1', [
          (hook.json as { id: string }).id,
        ])
      ).rows[0]!.n,
    );
    const dupes = [...received.values()].filter((n) => n > 1).length;

    console.log(`\nRan ${fmt(elapsedS, 1)} s; ${fmt(flows)} signing flows completed (upload → view → sign).`);
    console.log('\nrequests                        count     req/s   p50 ms   p99 ms   errors');
    let errors = 0;
    let total = 0;
    for (const [name, s] of [...stats].sort()) {
      if (name === 'setup') continue;
      errors += s.errors;
      total += s.n;
      console.log(
        `${name.padEnd(30)}${fmt(s.n).padStart(7)}${fmt(s.n / elapsedS, 1).padStart(10)}${fmt(pct(s.ms, 50), 1).padStart(9)}${fmt(pct(s.ms, 99), 1).padStart(9)}${fmt(s.errors).padStart(9)}` +
          (s.errors ? `  ${JSON.stringify(Object.fromEntries(s.statuses))}` : ''),
      );
    }
    const all = [...stats].filter(([n]) => n !== 'setup').flatMap(([, s]) => s.ms);
    console.log(
      `${'all'.padEnd(30)}${fmt(total).padStart(7)}${fmt(total / elapsedS, 1).padStart(10)}${fmt(pct(all, 50), 1).padStart(9)}${fmt(pct(all, 99), 1).padStart(9)}${fmt(errors).padStart(9)}`,
    );
    console.log(
      `\nwebhooks: ${fmt(events)} events queued for the hook, ${fmt(received.size)} distinct delivered, ${fmt(dupes)} delivered more than once, ${waiting} still waiting`,
    );
    console.log(
      `\nRSS per process (after ${fmt(WARM_UP_MS / 1000)} s warm-up → end; growth limit ${RSS_GROWTH_LIMIT * 100}%)`,
    );
    let grew = false;
    for (const [name, r] of [...rss].sort()) {
      const growth = r.warm && r.end ? r.end / r.warm - 1 : NaN;
      if (growth >= RSS_GROWTH_LIMIT) grew = true;
      console.log(
        `  ${name.padEnd(10)}${mb(r.warm).padStart(10)} → ${mb(r.end).padStart(10)}   ${Number.isFinite(growth) ? `${growth >= 0 ? '+' : ''}${fmt(100 * growth, 1)}%` : '–'}   (max ${mb(r.max)})`,
      );
    }
    const pass = errors === 0 && !grew && waiting === 0;
    console.log(
      `\n${pass ? 'PASS' : 'FAIL'}: ${errors} errors, RSS growth ${grew ? 'over' : 'under'} ${RSS_GROWTH_LIMIT * 100}%, ${waiting} deliveries left`,
    );
    return pass ? 0 : 1;
  } finally {
    await db.end().catch(() => undefined);
    receiver.close();
    agent.destroy();
    for (const a of signerAgents) a.destroy();
    if (!process.env.SOAK_KEEP)
      spawnSync('bash', [path.join(ROOT, 'scripts/cluster.sh'), 'down'], { env, stdio: 'inherit' });
  }
}

process.exitCode = await main();
