// A fixed pool of worker threads running one TypeScript module, so CPU-heavy work (text extraction, sealing)
// never blocks the API's event loop. Workers load their module through tsx, whatever started the main process.
// A task that crashes its worker fails with an error and the worker is replaced; queued tasks keep going.
import os from 'node:os';
import { Worker } from 'node:worker_threads';

export type WorkerPool<In, Out> = {
  run(input: In, transfer?: ArrayBuffer[]): Promise<Out>;
  close(): Promise<void>;
};

type Task<In, Out> = { input: In; transfer?: ArrayBuffer[]; resolve(v: Out): void; reject(e: Error): void };
type Slot<In, Out> = { worker: Worker; task: Task<In, Out> | null };

const SHIM = new URL('./worker-shim.mjs', import.meta.url);

/**
 * `moduleUrl` must export `handle(input): Promise<output> | output`. Size defaults to the cores minus one
 * (at least one), leaving a core for the API.
 */
export function createWorkerPool<In, Out>(moduleUrl: URL, size = Math.max(1, os.availableParallelism() - 1)): WorkerPool<In, Out> {
  const queue: Task<In, Out>[] = [];
  const slots: Slot<In, Out>[] = [];
  let closed = false;

  const spawn = (): Slot<In, Out> => {
    const worker = new Worker(SHIM, { workerData: { module: moduleUrl.href } });
    worker.unref();
    const slot: Slot<In, Out> = { worker, task: null };
    worker.on('message', (msg: { ok: true; value: Out } | { ok: false; error: string }) => {
      const t = slot.task;
      slot.task = null;
      if (t) {
        if (msg.ok) t.resolve(msg.value);
        else t.reject(new Error(msg.error));
      }
      pump();
    });
    worker.on('error', (err) => {
      const t = slot.task;
      slot.task = null;
      t?.reject(err instanceof Error ? err : new Error(String(err)));
    });
    worker.on('exit', () => {
      const i = slots.indexOf(slot);
      if (i >= 0) slots.splice(i, 1);
      const t = slot.task;
      slot.task = null;
      t?.reject(new Error('worker exited'));
      if (!closed && queue.length > 0) pump();
    });
    slots.push(slot);
    return slot;
  };

  const pump = () => {
    while (queue.length > 0) {
      let slot = slots.find((s) => s.task === null);
      if (!slot && slots.length < size) slot = spawn();
      if (!slot) return;
      const task = queue.shift()!;
      slot.task = task;
      slot.worker.postMessage(task.input, task.transfer ?? []);
    }
  };

  return {
    run(input, transfer) {
      if (closed) return Promise.reject(new Error('worker pool closed'));
      return new Promise<Out>((resolve, reject) => {
        queue.push({ input, transfer, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const t of queue.splice(0)) t.reject(new Error('worker pool closed'));
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
