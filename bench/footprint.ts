// `npm run bench:footprint`: what `npm start` costs on the embedded default (SQLite, no Redis, no SMTP), measured on
// the real command (`bin/signet serve`, as `npm start` runs it: the compiled build) in child processes on loopback:
// - start to first answered request (`GET /healthz`, polled every 5 ms): the first start on an empty DATA_DIR
//   (creates the database), then STARTS starts on that existing DATA_DIR;
// - RSS and threads of an idle server 10 s after its start;
// - a burst of 50 signing flows (upload a 2-page PDF, open the signer link from the mail outbox, view, sign, then
//   wait until every document is sealed), with RSS sampled every 250 ms;
// - RSS and threads every 30 s for FOOTPRINT_MINUTES after the burst (10 by default; the PDF and seal workers stop
//   after 2 idle minutes).
// Prints a table; writes nothing else. Targets (issue 13): start ≤ 1.5 s, idle RSS ≤ 150 MB, ≤ 180 MB ten minutes
// after the burst.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { makePdf } from '../src/documents/pdf/testing/fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The command users run: the shell wrapper (allocator settings) in front of bin/signet.js.
const BIN = path.join(ROOT, 'bin/signet');
const STARTS = Number(process.env.FOOTPRINT_STARTS ?? 7);
const MINUTES = Number(process.env.FOOTPRINT_MINUTES ?? 10);
const FLOWS = 50;
const CONCURRENCY = 4;
const TARGETS = { startMs: 1500, idleMb: 150, afterBurstMb: 180 };

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-footprint-'));
const port = 3500 + (process.pid % 400);
const base = `http://127.0.0.1:${port}`;
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  BASE_URL: base,
  LOG_LEVEL: 'warn',
  // One client address makes every signer request here; a person would come from their own.
  PUBLIC_RATE_LIMIT: '1000000',
};

type Proc = { pid: number; status(): { rssMb: number; threads: number }; stop(): Promise<void> };

/** Where a process's resident memory is, by mapping (anonymous memory, the malloc heap, each file), largest first. */
function residentBy(pid: number): string {
  const by = new Map<string, number>();
  let name = '';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) name = head[1] ? path.basename(head[1]) : '[anonymous]';
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) by.set(name, (by.get(name) ?? 0) + Number(rss[1]) / 1024);
  }
  return [...by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k, v]) => `${k} ${f1(v)} MB`)
    .join(', ');
}

function procStatus(pid: number) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    rssMb: Number(/VmRSS:\s+(\d+)/.exec(s)![1]) / 1024,
    threads: Number(/Threads:\s+(\d+)/.exec(s)![1]),
  };
}

/** Starts the server; resolves with the time to its first answered request. */
async function start(): Promise<{ ms: number; proc: Proc }> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(BIN, ['serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) throw new Error('no answer within 60 s');
    await sleep(5);
  }
  const ms = performance.now() - t0;
  return {
    ms,
    proc: {
      pid: child.pid!,
      status: () => procStatus(child.pid!),
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    },
  };
}

const cli = (...args: string[]) => JSON.parse(execFileSync(BIN, [...args, '--json'], { env }).toString());

async function call(method: string, url: string, token?: string, body?: unknown) {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text.startsWith('{') ? JSON.parse(text) : null };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f1 = (n: number) => n.toFixed(1);

async function main() {
  // The build is made (or found fresh) before anything is timed: `npm install` makes it on a fresh clone.
  execFileSync(BIN, ['--help'], { env, stdio: 'ignore' });
  console.log(`footprint: ${os.cpus().length} cores, load ${os.loadavg().map(f1).join(' / ')}, DATA_DIR ${dataDir}`);

  const first = await start();
  await first.proc.stop();
  const starts: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const s = await start();
    starts.push(s.ms);
    await s.proc.stop();
  }
  console.log(`first start (empty DATA_DIR: creates the database): ${first.ms.toFixed(0)} ms`);
  console.log(
    `start to first answer, existing DATA_DIR: median ${median(starts).toFixed(0)} ms (${starts.map((m) => m.toFixed(0)).join(', ')}); target ≤ ${TARGETS.startMs} ms`,
  );

  const { proc } = await start();
  try {
    await sleep(10_000);
    const idle = proc.status();
    console.log(
      `idle, 10 s after start: RSS ${f1(idle.rssMb)} MB, ${idle.threads} threads; target ≤ ${TARGETS.idleMb} MB`,
    );
    console.log(`  resident: ${residentBy(proc.pid)}`);

    const ws = cli('workspace', 'create', '--name', 'Footprint', '--tier', 'enterprise').workspace;
    const key = cli('key', 'create', '--workspace', ws.id);
    cli('key', 'set-limit', key.key.id, '1000000');
    const token: string = key.plaintext;
    const outbox = new Database(path.join(dataDir, 'signet.db'), { readonly: true });
    const linkFor = outbox.prepare<[string], { text: string }>('select text from mail_outbox where to_email = ?');
    const pdf = Buffer.from(await makePdf({ pages: 2, text: [['Footprint agreement'], ['Page two']] })).toString(
      'base64',
    );

    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, proc.status().rssMb)), 250);
    const t0 = performance.now();
    const documents: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < FLOWS) {
          const i = next++;
          const email = `footprint.${i}@example.com`;
          const created = await call('POST', `${base}/v1/signing-requests`, token, {
            signers: [{ role: 'signer', email, name: `Footprint ${i}` }],
            file: { name: 'footprint.pdf', content_base64: pdf },
            placement: 'auto_append',
            title: `Footprint ${i}`,
          });
          if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.json)}`);
          documents.push(created.json.document_id);
          let link: string | undefined;
          for (let tries = 0; tries < 400 && !link; tries++) {
            link = /\/sign\/([A-Za-z0-9_-]{43})/.exec(linkFor.get(email)?.text ?? '')?.[1];
            if (!link) await sleep(25);
          }
          if (!link) throw new Error(`no invitation for ${email}`);
          await call('GET', `${base}/sign/${link}`);
          await call('POST', `${base}/sign/${link}/view`);
          const signed = await call('POST', `${base}/sign/${link}/sign`, undefined, {
            signature: { type: 'typed', text: `Footprint ${i}` },
          });
          if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${JSON.stringify(signed.json)}`);
        }
      }),
    );
    for (const id of documents) {
      for (let tries = 0; ; tries++) {
        const d = await call('GET', `${base}/v1/documents/${id}`, token);
        if (d.json?.status === 'completed') break;
        if (tries > 1200) throw new Error(`document ${id} not sealed: ${JSON.stringify(d.json)}`);
        await sleep(50);
      }
    }
    clearInterval(sampler);
    outbox.close();
    const burstS = (performance.now() - t0) / 1000;
    const after = proc.status();
    console.log(
      `burst: ${FLOWS} signing flows, all sealed, in ${f1(burstS)} s; RSS peak ${f1(peak)} MB, at the end ${f1(after.rssMb)} MB, ${after.threads} threads`,
    );

    const samples: { min: number; rssMb: number; threads: number }[] = [];
    for (let s = 30; s <= MINUTES * 60; s += 30) {
      await sleep(30_000);
      samples.push({ min: s / 60, ...proc.status() });
    }
    console.log('after the burst (minutes: RSS MB / threads):');
    console.log(`  ${samples.map((x) => `${x.min}: ${f1(x.rssMb)} / ${x.threads}`).join(', ')}`);
    const last = samples.at(-1);
    if (last)
      console.log(
        `${MINUTES} min after the burst: RSS ${f1(last.rssMb)} MB, ${last.threads} threads; target ≤ ${TARGETS.afterBurstMb} MB`,
      );
    console.log(`  resident: ${residentBy(proc.pid)}`);
  } finally {
    await proc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
