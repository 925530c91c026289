// Retry schedules of the outbox jobs, written once: a schedule says how long to wait after the n-th failed attempt,
// or null when there is no attempt n+1.

export type RetrySchedule = (attemptsMade: number) => number | null;

/** Fixed delays: attempt n+1 waits `delays[n-1]`; after the last delay's attempt fails, give up. */
export const fixedDelays =
  (delays: readonly number[]): RetrySchedule =>
  (attemptsMade) =>
    attemptsMade >= 1 ? (delays[attemptsMade - 1] ?? null) : null;

/** Doubling delays from `firstMs`, capped at `maxMs`; never gives up. */
export const doubling =
  (firstMs: number, maxMs: number): RetrySchedule =>
  (attemptsMade) =>
    Math.min(maxMs, firstMs * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));

/** When attempt n+1 is due after `attemptsMade` failures, the last at `failedAt`; null: give up. */
export function nextAttemptAt(schedule: RetrySchedule, attemptsMade: number, failedAt: number): number | null {
  const delay = schedule(attemptsMade);
  return delay === null ? null : failedAt + delay;
}
