// A transaction that lost a race with another writer, run again from its start. PostgreSQL's READ COMMITTED takes a
// snapshot per statement, so a transaction of several deletes can meet a row that another writer committed between
// two of them: its next delete then violates a foreign key, or the two wait on each other's rows (a deadlock, one side
// aborted after deadlock_timeout). Rolled back whole, the next run sees that row from its first statement. SQLite
// runs one writer at a time and never answers with these codes.

/** deadlock_detected, serialization_failure, foreign_key_violation. */
const RACE_CODES = new Set(['40P01', '40001', '23503']);
const RUNS = 3;

/**
 * Runs `transaction` (a whole transaction, all or nothing) up to three times while it fails on a race. Only for
 * transactions whose own writes reference nothing they delete (a purge): a foreign-key violation then means another
 * writer's row (a wrong reference of their own would fail every run, and is answered as before).
 */
export async function retryingRaces<T>(transaction: () => Promise<T>): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await transaction();
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (run >= RUNS || typeof code !== 'string' || !RACE_CODES.has(code)) throw err;
    }
  }
}
