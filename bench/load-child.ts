// The load generator: autocannon in a forked child (load.ts) with its own event loop, pinned to its own CPU.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadReport } from './load.js';
import { CONNECTIONS, CREATE_CLIENTS, DURATION_S, WARMUP_S } from './settings.js';

const here = path.dirname(fileURLToPath(import.meta.url));

// With two or more cores the servers (this process) and the load generator each get a core of their own, so they do
// not take turns on one; without taskset, or on one core, the scheduler decides as before.
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;
export let pinned = false;
export function pin(pid: number, cpu: number): void {
  if (os.cpus().length < 2) return;
  try {
    execFileSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
    pinned = true;
  } catch {
    // taskset missing or not permitted: unpinned.
  }
}

export let child: ChildProcess | undefined;
let jobSeq = 0;
const pending = new Map<number, (r: LoadReport) => void>();

function loadGenerator(): ChildProcess {
  if (child) return child;
  child = fork(path.join(here, 'load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  pin(child.pid!, LOAD_CPU);
  child.on('message', (r: LoadReport) => {
    pending.get(r.id)?.(r);
    pending.delete(r.id);
  });
  child.on('exit', (code) => {
    for (const [id, resolve] of pending) resolve({ id, error: `load generator exited (${code})` } as LoadReport);
    pending.clear();
  });
  return child;
}

/** `create`: `url` is the server's base; CREATE_CLIENTS connections POST signing requests (load.ts). */
export function load(
  url: string,
  headers: Record<string, string>,
  duration = DURATION_S,
  warmup = WARMUP_S,
  create = false,
): Promise<LoadReport> {
  const connections = create ? CREATE_CLIENTS : CONNECTIONS;
  const job: LoadJob = {
    id: ++jobSeq,
    create,
    opts: { url, headers, connections, duration, warmup: { connections, duration: warmup } },
  };
  return new Promise((resolve) => {
    pending.set(job.id, resolve);
    loadGenerator().send(job);
  });
}
