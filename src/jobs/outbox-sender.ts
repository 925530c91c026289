// The sender of a message outbox (mail, SMS), written once on the lease runner: claim due rows, send each outside
// any transaction, and record the outcome only while the claim is held. A failure is retried on the outbox's
// schedule, or the row becomes `failed` when the schedule is spent or the failure is permanent; a row handed back
// unsent (the worker is stopping) keeps its attempt count. A sender that dies mid-send leaves a lease that lapses,
// so a row is sent at least once.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { nextAttemptAt, type RetrySchedule } from './retry.js';
import { createRunner, type Claimed, type RunnerOptions } from './runner.js';

/** What every outbox row has: its id, attempts so far, and the claim's expiry while claimed. */
export type OutboxRow = { id: string; attempts: number; claim_expires_at: number | null };

/** The columns a failure writes; every outbox table has them. */
export type FailurePatch = {
  status: 'queued' | 'failed';
  attempts: number;
  next_attempt_at: number | null;
  last_error: string;
  updated_at: number;
};

export type OutboxSenderSpec<R extends OutboxRow> = Omit<RunnerOptions, 'name'> & {
  /** `mail`, `sms`: the runner's name and the start of each log line. */
  name: string;
  schedule: RetrySchedule;
  claim(o: { now: number; workerId: string; leaseMs: number; limit: number }): Promise<R[]>;
  /** Writes `patch` to the row while this worker holds its claim (and releases it); false when it no longer does. */
  record(row: R, patch: Partial<R> | FailurePatch | { updated_at: number }): Promise<boolean>;
  /** Sends one row and resolves with the columns of its success; throws on failure. */
  send(row: R): Promise<Partial<R>>;
  /** A failure that a later attempt cannot mend (a rejected address, a bad number). */
  permanent(err: unknown): boolean;
  /** The failure as stored and logged: never a credential. */
  describe(err: unknown): string;
  /** How log lines name the row (id, template, recipient). */
  logFields(row: R): Record<string, unknown>;
};

/** What a mail or SMS sender is built with, besides its transport (each has its own defaults). */
export type OutboxSenderOptions = {
  db: Db;
  clock: Clock;
  logger?: Logger;
  /** Owner of claims; unique per process. */
  workerId?: string;
  leaseMs?: number;
  /** The longest one send may take (the transport's own timeout bounds it); the lease must outlast it. */
  sendTimeoutMs?: number;
  batchSize?: number;
  /** Parallel sends (for SMTP, pooled connections too). */
  concurrency?: number;
  /** Real-time sleep of the background loop when nothing was due. */
  pollIntervalMs?: number;
};

export type OutboxSender = {
  /** Sends every due row; resolves with how many were sent (or logged). */
  flush(): Promise<number>;
  /** Background loop: flush, then an unref'd sleep of pollIntervalMs when nothing was due. */
  start(): void;
  /** Ends the loop's sleep now (new rows were committed). */
  wake(): void;
  /** Stops the loop and waits for sends in flight and their records. */
  stop(): Promise<void>;
};

export function createOutboxSender<R extends OutboxRow>(spec: OutboxSenderSpec<R>): OutboxSender {
  const { clock } = spec;
  async function work(row: R): Promise<boolean> {
    let success: Partial<R>;
    try {
      success = await spec.send(row);
    } catch (err) {
      const made = row.attempts + 1;
      const next = spec.permanent(err) ? null : nextAttemptAt(spec.schedule, made, clock.now());
      const error = spec.describe(err);
      spec.logger?.warn(
        { ...spec.logFields(row), attempt: made, error },
        next === null ? `${spec.name} delivery giving up` : `${spec.name} delivery failed, will retry`,
      );
      await spec.record(row, {
        status: next === null ? 'failed' : 'queued',
        attempts: made,
        next_attempt_at: next,
        last_error: error,
        updated_at: clock.now(),
      });
      return false;
    }
    return spec.record(row, success);
  }
  const runner = createRunner<R & Claimed>(
    {
      claim: async (o) => (await spec.claim(o)).map((row) => ({ ...row, claimExpiresAt: row.claim_expires_at! })),
      work,
      release: async (row) => void (await spec.record(row, { updated_at: clock.now() })),
    },
    spec,
  );
  return {
    flush: () => runner.runOnce(),
    start: () => runner.start(),
    wake: () => runner.wake(),
    stop: () => runner.stop(),
  };
}
