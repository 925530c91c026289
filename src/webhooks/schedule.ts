// The spec's retry schedule: attempt 1 immediate, then +1m, +5m, +30m, +2h, +6h, +24h; giving_up after the 7th failure.
export const MAX_ATTEMPTS = 7;
export const DELIVERY_TIMEOUT_MS = 15_000;

const MIN = 60_000;
/** Delay before attempt n+1 after attempt n failed (index n-1). */
export const RETRY_DELAYS_MS = [1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 360 * MIN, 1440 * MIN] as const;

/** When the next attempt is due after `attemptsMade` failures, or null when the delivery gives up. */
export function nextAttemptAt(attemptsMade: number, failedAt: number): number | null {
  if (attemptsMade >= MAX_ATTEMPTS) return null;
  return failedAt + RETRY_DELAYS_MS[attemptsMade - 1]!;
}
