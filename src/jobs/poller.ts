// A background loop for work that should start promptly (sealing, mail): run, and when nothing was done sleep
// (unref'd) until the interval passes or wake() is called. stop() waits for the current run to finish.
export type Poller = { start(): void; wake(): void; stop(): Promise<void>; runOnce(): Promise<number> };

export function createPoller(run: () => Promise<number>, opts: { intervalMs: number; onError?: (err: unknown) => void }): Poller {
  let stopping = false;
  let loop: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let wakeUp: (() => void) | null = null;
  let woken = false;
  let current: Promise<number> = Promise.resolve(0);

  const runOnce = () => (current = current.then(run, run).catch((err) => (opts.onError?.(err), 0)));
  const sleep = () =>
    new Promise<void>((resolve) => {
      if (woken || stopping) return resolve();
      wakeUp = resolve;
      timer = setTimeout(resolve, opts.intervalMs);
      timer.unref();
    }).finally(() => {
      if (timer) clearTimeout(timer);
      timer = null;
      wakeUp = null;
      woken = false;
    });

  return {
    runOnce,
    start() {
      if (loop) return;
      loop = (async () => {
        while (!stopping) {
          const n = await runOnce();
          if (n === 0 && !stopping) await sleep();
        }
      })();
    },
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      stopping = true;
      wakeUp?.();
      await loop;
      await current.catch(() => undefined);
    },
  };
}
