// Runs PDF work on a shared worker-thread pool with a time limit per task, so a hostile PDF can neither block the
// event loop nor hold a worker forever. Guarantees (mostly the pool's own, see src/lib/worker-pool.ts):
// - a task's clock starts when a worker actually takes it (the pool is FIFO), not while it waits in the queue or
//   while a new worker loads pdf.js and pdf-lib (seconds under tsx): every worker, at start and every replacement,
//   first runs one warm-up task (under its own limit, not a task's);
// - a task over its limit fails with PdfTaskTimeout, and only its worker is terminated and replaced (the
//   replacement warms up before taking work); tasks on the other workers and queued tasks are not disturbed, never
//   killed or re-run;
// - a worker that dies under a task (crash, out of memory), or an error that is not an ApiError, is PdfTaskCrash;
// - an ApiError thrown inside the worker arrives here as the same ApiError (code and meta), not a bare Error.
import { apiError, ApiError, type ErrorName } from '../../lib/errors.js';
import { createWorkerPool, siblingModule, WorkerTaskTimeout, type WorkerPool } from '../../lib/worker-pool.js';
import type { WorkerInput, WorkerOutput } from './pdf.worker.js';
import { PDF_WORKER_IDLE_MS } from '../../limits.js';

export class PdfTaskTimeout extends Error {}
/** The worker died (crash, out of memory) or reported an error that is not an ApiError. */
export class PdfTaskCrash extends Error {}

const WORKER = siblingModule(import.meta.url, './pdf.worker');
let pool: WorkerPool<WorkerInput, WorkerOutput> | null = null;
let poolSize: number | undefined;

export async function runPdfTask<T>(input: WorkerInput, timeoutMs: number): Promise<T> {
  pool ??= createWorkerPool<WorkerInput, WorkerOutput>(WORKER, {
    size: poolSize,
    warmup: { op: 'warmup' },
    idleTimeoutMs: PDF_WORKER_IDLE_MS,
  });
  let out: WorkerOutput;
  try {
    out = await pool.run(input, { timeoutMs });
  } catch (err) {
    if (err instanceof WorkerTaskTimeout) throw new PdfTaskTimeout(`PDF task "${input.op}" exceeded ${timeoutMs} ms`);
    throw new PdfTaskCrash(err instanceof Error ? err.message : String(err));
  }
  if (out.ok) return out.value as T;
  throw apiError(out.error.name, { message: out.error.message, meta: out.error.meta });
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

/**
 * For tests and shutdown: stop the workers, failing unfinished tasks with PdfTaskCrash; the next task starts a fresh
 * pool (of `size` workers if given).
 */
export async function closePdfWorkers(size?: number): Promise<void> {
  const p = pool;
  pool = null;
  poolSize = size;
  await p?.close();
}

export type SerialisedError = { name: ErrorName; message: string; meta?: Record<string, unknown> };
