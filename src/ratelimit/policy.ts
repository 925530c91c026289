// The rate-limit policy shared by every store: N admitted requests per fixed 60 s window per bucket,
// the window opening on the bucket's first request; refused requests never count.

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds?: number;
};

export type RateLimiter = {
  /**
   * Count one request against `bucket` (an API key id). The in-process store answers synchronously, so the /v1 gate
   * pays no promise for it; a nonsensical limit is always a rejected promise.
   */
  hit(bucket: string, limit?: number): RateDecision | Promise<RateDecision>;
  /** 'memory' | 'redis' | 'fallback' — which store served the last decision; for tests and diagnostics. */
  readonly mode: string;
  close(): Promise<void>;
};

export function checkLimit(limit: number): void {
  // A zero/negative/fractional limit is a caller bug; failing loudly beats silently admitting or refusing everyone.
  if (!(limit >= 1) || !Number.isSafeInteger(limit))
    throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
}

/** Builds the decision from the post-request state: `count` admitted so far, `msLeft` until the window closes. */
export function decide(allowed: boolean, limit: number, count: number, msLeft: number): RateDecision {
  // Round up so a client never retries into a still-closed window; at least 1 while the window is open.
  const secs = msLeft > 0 ? Math.ceil(msLeft / 1000) : 1;
  if (allowed) return { allowed, limit, remaining: count < limit ? limit - count : 0, resetSeconds: secs };
  return { allowed, limit, remaining: 0, resetSeconds: secs, retryAfterSeconds: secs };
}
