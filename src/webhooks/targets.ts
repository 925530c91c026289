// One dispatcher's view of its receivers (a target is a hook URL's origin), so that one slow or hanging receiver
// cannot hold every lane while other receivers' deliveries wait. Guarantees:
// - A request in flight longer than `slowMs` lets go of its lane: the lane takes its next delivery while the request
//   runs on to its own end (its deadline is the poster's), and its outcome is recorded then, as any other. At most
//   `maxLetGo` requests are let go at once; beyond that, lanes wait for their requests as before.
// - A target is slow while one of its requests that let go is in flight, and for `timeoutMs` after the last one
//   ended. While slow, a target has at most `slowInFlight` requests in flight from this dispatcher; `deferral` tells
//   the caller to defer a delivery beyond that, by a wait that grows with the deferrals made since the target became
//   slow (`timeoutMs` more per `slowInFlight` deferrals, at most `deferMaxMs`), so a backlog for a hanging receiver
//   is spread over the time it could take, not claimed and deferred again on every pass.
// - Nothing here decides an outcome: a deferred delivery is not attempted and keeps its attempt count.
// - A stall of this process is not a receiver's slowness: when the check runs late (the event loop was blocked, or the
//   machine starved it), answers that arrived meanwhile are still unread, so every request in flight is given as long
//   again (at most `slowMs`) before it can let go. A hanging receiver is still found once this process runs on time,
//   and the poster's deadline ends its requests regardless.
import { performance } from 'node:perf_hooks';

export type TargetLanesOptions = {
  slowMs: number;
  slowInFlight: number;
  maxLetGo: number;
  timeoutMs: number;
  deferMaxMs: number;
  /** A request that failed after it let go of its lane has nobody left to reject to. */
  onLateError(err: unknown): void;
};

export type TargetLanes = {
  /** null: send now; otherwise defer the delivery by this many ms (the target is slow and at its limit). */
  deferral(target: string): number | null;
  /** Runs `send` for `target`; resolves when it ended, or earlier when it let go of its lane. */
  hold(target: string, send: () => Promise<void>): Promise<void>;
  /** Resolves once every request that let go of its lane has ended. */
  idle(): Promise<void>;
};

type Target = { key: string; inFlight: number; letGo: number; slowUntil: number; deferred: number };
type Run = {
  target: Target;
  /** From when its time counts toward `slowMs`: its start, moved later by stalls of this process. */
  countedFrom: number;
  /** Set once the run let go of its lane: resolves when its request has ended. */
  late?: Promise<void>;
  lateDone?: () => void;
  release(): void;
};

export function createTargetLanes(o: TargetLanesOptions): TargetLanes {
  const targets = new Map<string, Target>();
  // Lane-holding requests in start order: the oldest is the next to let go.
  const holding = new Set<Run>();
  const lateRuns = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  // When the armed check should run; how late it ran is how long this process was not running.
  let dueAt = 0;

  const isSlow = (t: Target, now: number) => t.letGo > 0 || now < t.slowUntil;
  const forgetIfIdle = (t: Target, now: number) => {
    if (t.inFlight === 0 && !isSlow(t, now)) targets.delete(t.key);
  };

  const arm = () => {
    if (timer !== undefined || lateRuns.size >= o.maxLetGo) return;
    const first = holding.values().next().value;
    if (first === undefined) return;
    const now = performance.now();
    dueAt = Math.max(now, first.countedFrom + o.slowMs);
    timer = setTimeout(sweep, dueAt - now);
    // In-flight requests keep the process alive on their own; this timer must not.
    timer.unref();
  };
  function sweep() {
    timer = undefined;
    const now = performance.now();
    const lag = now - dueAt;
    if (lag > o.slowMs / 10) {
      // Runs stay in start order: every countedFrom moves up to the same bound or keeps its later value.
      const from = now - o.slowMs + Math.min(lag, o.slowMs);
      for (const run of holding) run.countedFrom = Math.max(run.countedFrom, from);
      arm();
      return;
    }
    for (const run of holding) {
      if (run.countedFrom + o.slowMs > now || lateRuns.size >= o.maxLetGo) break;
      holding.delete(run);
      run.target.letGo++;
      run.late = new Promise<void>((resolve) => (run.lateDone = resolve));
      lateRuns.add(run.late);
      run.release();
    }
    arm();
  }
  // One request ended: its bookkeeping, then its lane (if it still holds one) or the idle() waiters.
  function ended(run: Run, failed: boolean, err: unknown, resolve: () => void, reject: (err: unknown) => void) {
    holding.delete(run);
    const t = run.target;
    t.inFlight--;
    const now = performance.now();
    if (run.late === undefined) {
      if (failed) reject(err);
      else resolve();
    } else {
      if (failed) o.onLateError(err);
      lateRuns.delete(run.late);
      t.letGo--;
      t.slowUntil = now + o.timeoutMs;
      run.lateDone!();
      arm();
    }
    forgetIfIdle(t, now);
  }

  return {
    deferral(key) {
      const t = targets.get(key);
      if (t === undefined) return null;
      const now = performance.now();
      if (!isSlow(t, now)) {
        forgetIfIdle(t, now);
        return null;
      }
      if (t.inFlight < o.slowInFlight) return null;
      const wait = Math.min(o.deferMaxMs, o.timeoutMs * (1 + Math.floor(t.deferred / o.slowInFlight)));
      t.deferred++;
      return wait;
    },

    hold(key, send) {
      let target = targets.get(key);
      if (target === undefined) {
        target = { key, inFlight: 0, letGo: 0, slowUntil: 0, deferred: 0 };
        targets.set(key, target);
      }
      target.inFlight++;
      const t = target;
      return new Promise<void>((resolve, reject) => {
        const run: Run = { target: t, countedFrom: performance.now(), release: resolve };
        holding.add(run);
        arm();
        send().then(
          () => ended(run, false, undefined, resolve, reject),
          (err: unknown) => ended(run, true, err, resolve, reject),
        );
      });
    },

    async idle() {
      while (lateRuns.size > 0) await Promise.all([...lateRuns]);
    },
  };
}
