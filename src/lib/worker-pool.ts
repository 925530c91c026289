// A fixed-size pool of worker threads running one TypeScript module, so CPU-heavy work (PDF parsing, sealing)
// never blocks the API's event loop. A TypeScript module (the sources, in tests) is loaded through tsx, whatever
// started the main process; the build's JavaScript loads without it.
// Guarantees:
// - tasks are taken in FIFO order, one at a time per worker, only by a worker that has loaded its module (and run
//   the warm-up, if any);
// - a task's time limit (`timeoutMs`) runs from the moment a worker takes it: time spent in the queue, and a new
//   worker's start-up and warm-up, are never charged;
// - a task over its limit fails with WorkerTaskTimeout, and only its worker is terminated and replaced: tasks on the
//   other workers and the queued tasks carry on untouched;
// - a task that crashes its worker fails with an error and the worker is replaced; queued tasks keep going;
// - workers start on demand, when a task is queued and none is idle, up to `size`; with a `warmup` input, every new
//   worker runs it once, uncharged to any task, before it is offered a task;
// - with `idleTimeoutMs`, a worker that had nothing to do for that long is stopped (its memory given back), so an
//   idle pool holds no thread; the next task starts a worker again;
// - a warm-up has its own limit (`warmupTimeoutMs`): one that hangs counts as a failed start, so it cannot hold the
//   queue for ever;
// - a worker that fails to start (its module or its warm-up throws, or it exits first) is dropped and not replaced
//   in a loop: if no other worker is left, the queued tasks fail with that error, and only a later run() starts a
//   new worker. A warm-up that always fails therefore costs one worker start per run() call, never a spin;
// - while a task is queued or running, the workers keep the process alive, so an awaited task always settles (a
//   timed task at the latest at its limit); an idle pool, or one that is only starting or warming up, does not;
// - close() fails the queued and running tasks and terminates every worker.
import os from 'node:os';
import { Worker } from 'node:worker_threads';

export type RunOptions = {
  /** Buffers to move into the worker rather than copy; they are detached here once the task is handed over. */
  transfer?: ArrayBuffer[];
  /** Time limit in ms, counted from when a worker takes the task. No limit when omitted. */
  timeoutMs?: number;
};

export type WorkerPoolOptions<In> = {
  /** Number of workers; defaults to the cores minus one (at least one), leaving a core for the API. */
  size?: number;
  /** Input every new worker runs once, uncharged to any task, before it takes tasks (e.g. to load slow dependencies). */
  warmup?: In;
  /** Limit on one worker's warm-up; past it the worker counts as failed to start. Default 120 s. */
  warmupTimeoutMs?: number;
  /** Stop a worker idle for this long. Default: never. */
  idleTimeoutMs?: number;
};

export type WorkerPool<In, Out> = {
  run(input: In, opts?: RunOptions): Promise<Out>;
  /** Workers running now, starting ones included. */
  readonly workers: number;
  close(): Promise<void>;
};

/** A task ran past its `timeoutMs`; its worker was terminated. */
export class WorkerTaskTimeout extends Error {
  override name = 'WorkerTaskTimeout';
  constructor(readonly timeoutMs: number) {
    super(`worker task exceeded its ${timeoutMs} ms limit`);
  }
}

type Task<In, Out> = {
  input: In;
  transfer?: ArrayBuffer[];
  timeoutMs?: number;
  resolve(v: Out): void;
  reject(e: Error): void;
};
type Slot<In, Out> = {
  worker: Worker;
  state: 'starting' | 'warming' | 'idle' | 'busy';
  task: Task<In, Out> | null;
  timer?: NodeJS.Timeout;
  /** Armed while the worker is idle, when the pool has an idle timeout. */
  idleTimer?: NodeJS.Timeout;
};
type Reply<Out> = { ready: true } | { ok: true; value: Out } | { ok: false; error: string };

const SHIM = new URL('./worker-shim.mjs', import.meta.url);
const DEFAULT_WARMUP_TIMEOUT_MS = 120_000;
const toError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * The URL of a worker module beside `base` (a module's import.meta.url): `<stem>.ts` when running the sources,
 * `<stem>.js` when running the build in dist/.
 */
export const siblingModule = (base: string, stem: string): URL =>
  new URL(`${stem}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);

/** `moduleUrl` must export `handle(input): Promise<output> | output`. */
export function createWorkerPool<In, Out>(moduleUrl: URL, opts: WorkerPoolOptions<In> = {}): WorkerPool<In, Out> {
  const {
    size = Math.max(1, os.availableParallelism() - 1),
    warmup,
    warmupTimeoutMs = DEFAULT_WARMUP_TIMEOUT_MS,
    idleTimeoutMs,
  } = opts;
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`worker pool size must be a positive integer, got ${size}`);
  const queue: Task<In, Out>[] = [];
  const slots: Slot<In, Out>[] = [];
  let closed = false;
  let outstanding = 0; // real tasks queued or running

  // Workers hold the process open only while a real task is outstanding.
  const keepAlive = () => {
    for (const s of slots) {
      if (outstanding > 0) s.worker.ref();
      else s.worker.unref();
    }
  };

  const spawn = (): void => {
    const worker = new Worker(SHIM, { workerData: { module: moduleUrl.href } });
    const slot: Slot<In, Out> = { worker, state: 'starting', task: null };
    slots.push(slot);
    worker.on('message', (msg: Reply<Out>) => {
      if (!slots.includes(slot)) return; // dropped (killed or closed): a late reply is ignored
      if ('ready' in msg) {
        if (warmup === undefined) {
          slot.state = 'idle';
          pump();
        } else {
          slot.state = 'warming';
          try {
            worker.postMessage(warmup);
          } catch (err) {
            lose(slot, toError(err)); // not cloneable: fails like any warm-up
            return;
          }
          slot.timer = setTimeout(
            () => lose(slot, new Error(`no answer within ${warmupTimeoutMs} ms`)),
            warmupTimeoutMs,
          );
          slot.timer.unref();
        }
        return;
      }
      if (slot.state === 'warming') {
        clearTimeout(slot.timer);
        slot.timer = undefined;
        if (msg.ok) {
          slot.state = 'idle';
          pump();
        } else lose(slot, new Error(msg.error));
        return;
      }
      const t = slot.task;
      clearTimeout(slot.timer);
      slot.timer = undefined;
      slot.task = null;
      slot.state = 'idle';
      if (t) {
        if (msg.ok) t.resolve(msg.value);
        else t.reject(new Error(msg.error));
      }
      pump();
    });
    worker.on('error', (err) => lose(slot, toError(err)));
    worker.on('exit', (code) => lose(slot, new Error(`worker exited (code ${code})`)));
    // After the listeners: adding the first 'message' listener refs the worker's port again.
    if (outstanding === 0) worker.unref();
  };

  /** Removes a slot and terminates its worker; false if it was already gone. */
  const drop = (slot: Slot<In, Out>): boolean => {
    const i = slots.indexOf(slot);
    if (i < 0) return false;
    slots.splice(i, 1);
    clearTimeout(slot.timer);
    clearTimeout(slot.idleTimer);
    slot.timer = undefined;
    void slot.worker.terminate().catch(() => {});
    return true;
  };

  /** A lost worker is replaced when the queue needs one. */
  const replace = () => {
    if (!closed) pump();
  };

  /** The worker crashed, exited, or failed to start. */
  const lose = (slot: Slot<In, Out>, err: Error) => {
    const { state, task } = slot;
    if (!drop(slot)) return;
    slot.task = null;
    if (state === 'starting' || state === 'warming') {
      // Not replaced, so a start that always fails cannot loop; fail the queue if nobody is left to serve it.
      if (slots.length > 0) return;
      const what = state === 'warming' ? 'worker warm-up failed' : 'worker failed to start';
      const failure = new Error(`${what}: ${err.message}`, { cause: err });
      for (const t of queue.splice(0)) t.reject(failure);
      return;
    }
    task?.reject(err);
    replace();
  };

  const take = (slot: Slot<In, Out>, task: Task<In, Out>) => {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    slot.state = 'busy';
    slot.task = task;
    try {
      slot.worker.postMessage(task.input, task.transfer ?? []);
    } catch (err) {
      // Not cloneable: the worker never saw it.
      slot.state = 'idle';
      slot.task = null;
      task.reject(toError(err));
      return;
    }
    if (task.timeoutMs !== undefined && Number.isFinite(task.timeoutMs)) {
      const ms = task.timeoutMs;
      slot.timer = setTimeout(() => {
        if (slot.task !== task || !drop(slot)) return;
        slot.task = null;
        task.reject(new WorkerTaskTimeout(ms));
        replace();
      }, ms);
    }
  };

  const pump = () => {
    while (!closed && queue.length > 0) {
      const slot = slots.find((s) => s.state === 'idle');
      if (!slot) break;
      take(slot, queue.shift()!);
    }
    // Start workers for what is left, counting those already starting.
    let starting = slots.filter((s) => s.state === 'starting' || s.state === 'warming').length;
    while (!closed && slots.length < size && starting < queue.length) {
      spawn();
      starting++;
    }
    if (idleTimeoutMs === undefined || closed) return;
    for (const slot of slots) {
      if (slot.state !== 'idle' || slot.idleTimer) continue;
      slot.idleTimer = setTimeout(() => {
        if (slot.state === 'idle') drop(slot); // stopped, not lost: nothing to replace
      }, idleTimeoutMs);
      slot.idleTimer.unref();
    }
  };

  return {
    run(input, { transfer, timeoutMs } = {}) {
      if (closed) return Promise.reject(new Error('worker pool closed'));
      return new Promise<Out>((resolve, reject) => {
        let settled = false;
        const settle = () => {
          if (settled) return false;
          settled = true;
          if (--outstanding === 0) keepAlive();
          return true;
        };
        queue.push({
          input,
          transfer,
          timeoutMs,
          resolve: (v) => settle() && resolve(v),
          reject: (e) => settle() && reject(e),
        });
        if (++outstanding === 1) keepAlive();
        pump();
      });
    },
    get workers() {
      return slots.length;
    },
    async close() {
      closed = true;
      for (const t of queue.splice(0)) t.reject(new Error('worker pool closed'));
      const all = slots.splice(0);
      for (const s of all) {
        clearTimeout(s.timer);
        clearTimeout(s.idleTimer);
        const t = s.task;
        s.task = null;
        t?.reject(new Error('worker pool closed'));
      }
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}
