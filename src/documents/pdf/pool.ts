// Runs PDF work on the shared worker-thread pool with a time limit per task, so a hostile PDF can neither block
// the event loop nor hold a worker forever. Guarantees:
// - a task's clock starts when a worker actually takes it (the pool is FIFO), not while it waits in the queue or
//   while a new worker loads pdf.js and pdf-lib (seconds under tsx): each new pool first runs one untimed-ish
//   warm-up task per worker;
// - a task over its limit fails with PdfTaskTimeout and its worker is terminated: the whole pool generation is
//   closed (the pool cannot kill a single worker) and the other unfinished tasks of that generation are re-run on
//   a fresh one, which is safe because every task is a pure function of its input;
// - an ApiError thrown inside the worker arrives here as the same ApiError (code and meta), not a bare Error.
import os from 'node:os';
import { apiError, ApiError, type ErrorName } from '../../http/errors.js';
import { createWorkerPool, type WorkerPool } from '../../lib/worker-pool.js';
import type { WorkerInput, WorkerOutput } from './pdf.worker.js';

export class PdfTaskTimeout extends Error {}
/** The worker died (crash, out of memory) or reported an error that is not an ApiError. */
export class PdfTaskCrash extends Error {}

type Job = {
  input: WorkerInput;
  timeoutMs: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
};
type Generation = { pool: WorkerPool<WorkerInput, WorkerOutput>; size: number; jobs: Job[]; dead: boolean };

const WORKER = new URL('./pdf.worker.ts', import.meta.url);
const WARMUP_TIMEOUT_MS = 120_000;
let current: Generation | null = null;
let poolSize: number | undefined;

function generation(): Generation {
  if (!current || current.dead) {
    const size = poolSize ?? defaultSize();
    const gen: Generation = { pool: createWorkerPool<WorkerInput, WorkerOutput>(WORKER, size), size, jobs: [], dead: false };
    current = gen;
    for (let i = 0; i < size; i++) enqueue(gen, { input: { op: 'warmup' }, timeoutMs: WARMUP_TIMEOUT_MS, resolve() {}, reject() {} });
  }
  return current;
}

// Same default as createWorkerPool; passed explicitly because arm() must know which tasks are running.
const defaultSize = (): number => Math.max(1, os.availableParallelism() - 1);

/** Start the clocks of the tasks the pool is running now: the first `size` unfinished ones, in order. */
function arm(gen: Generation): void {
  for (const job of gen.jobs.slice(0, gen.size)) {
    if (job.timer) continue;
    job.timer = setTimeout(() => expire(gen, job), job.timeoutMs);
    // A real task's timer keeps the process alive (the workers are unref'd), so an awaited task always settles.
    if (job.input.op === 'warmup') job.timer.unref();
  }
}

function finish(gen: Generation, job: Job): boolean {
  const i = gen.jobs.indexOf(job);
  if (gen.dead || i < 0) return false;
  gen.jobs.splice(i, 1);
  clearTimeout(job.timer);
  arm(gen);
  return true;
}

function expire(gen: Generation, job: Job): void {
  if (gen.dead) return;
  gen.dead = true;
  const others = gen.jobs.filter((j) => j !== job);
  gen.jobs = [];
  for (const j of others) clearTimeout(j.timer);
  void gen.pool.close().catch(() => {});
  job.reject(new PdfTaskTimeout(`PDF task "${job.input.op}" exceeded ${job.timeoutMs} ms`));
  for (const j of others) if (j.input.op !== 'warmup') submit({ ...j, timer: undefined });
}

function submit(job: Job): void {
  enqueue(generation(), job);
}

function enqueue(gen: Generation, job: Job): void {
  gen.jobs.push(job);
  gen.pool.run(job.input).then(
    (out) => {
      if (!finish(gen, job)) return;
      if (out.ok) job.resolve(out.value);
      else job.reject(apiError(out.error.name, { message: out.error.message, meta: out.error.meta }));
    },
    (err: Error) => {
      if (!finish(gen, job)) return;
      job.reject(new PdfTaskCrash(err.message));
    },
  );
  arm(gen);
}

export function runPdfTask<T>(input: WorkerInput, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    submit({ input, timeoutMs, resolve: resolve as (v: unknown) => void, reject });
  });
}

/**
 * Runs a task and turns a time-out or crash into the ApiError the caller chose (a hostile upload is the user's
 * problem; a crash on an already accepted PDF is ours, so those callers pass nothing and get the raw error).
 */
export async function runPdfTaskOr<T>(
  input: WorkerInput,
  timeoutMs: number,
  onFailure?: (kind: 'timeout' | 'crash', err: Error) => ApiError,
): Promise<T> {
  try {
    return await runPdfTask<T>(input, timeoutMs);
  } catch (err) {
    if (err instanceof ApiError || !onFailure) throw err;
    throw onFailure(err instanceof PdfTaskTimeout ? 'timeout' : 'crash', err as Error);
  }
}

/** For tests and shutdown: stop the workers; the next task starts a fresh pool (of `size` workers if given). */
export async function closePdfWorkers(size?: number): Promise<void> {
  const gen = current;
  current = null;
  poolSize = size;
  if (gen) {
    gen.dead = true;
    for (const j of gen.jobs) {
      clearTimeout(j.timer);
      j.reject(new PdfTaskCrash('PDF workers closed'));
    }
    gen.jobs = [];
    await gen.pool.close();
  }
}

export type SerialisedError = { name: ErrorName; message: string; meta?: Record<string, unknown> };
