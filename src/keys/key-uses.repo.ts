// SQL of the key-use audit (`key_uses`, migration 007): one row per /v1 request made with a key, written in
// batches by key-use.ts, read newest first by (at, id), pruned after their retention (KEY_USES_PRUNE).
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { PruneTarget } from '../jobs/prune.repo.js';

export type KeyUseRow = {
  key_id: string;
  workspace_id: string;
  at: number;
  ip_masked: string | null;
  method: string;
  route: string;
  status: number;
};

export type KeyUse = KeyUseRow & { id: number };

/** Where the next page starts: the last row of the previous one. */
export type KeyUseCursor = { at: number; id: number };

/**
 * Rows per INSERT: 7 parameters each, so 128 rows stay under 999, the lowest parameter limit SQLite was ever built
 * with. A batch is split into chunks of 128 and a remainder cut into powers of two, so a busy recorder prepares at
 * most 8 distinct statements, not one per batch size (SQLite's statement cache is keyed by SQL text).
 */
export const KEY_USE_INSERT_CHUNK = 128;

/**
 * The statement for `n` rows, compiled by Kysely once per dialect (the key is the one-row statement's text): building
 * and compiling a 128-row insert through the query builder cost more than SQLite's own work. Its parameters are the
 * rows' values row by row, in the order of `KeyUseRow`'s fields.
 */
const statements = new Map<string, Map<number, string>>();

function statementsFor(db: Kysely<Database>): (n: number) => string {
  // Each template value is its own position, so the compiled parameters show the order the values must come in.
  const template = (rows: number) =>
    db
      .insertInto('key_uses')
      .values(
        Array.from({ length: rows }, (_, r) => {
          const p = r * 7;
          return {
            key_id: p,
            workspace_id: p + 1,
            at: p + 2,
            ip_masked: p + 3,
            method: p + 4,
            route: p + 5,
            status: p + 6,
          };
        }) as unknown as KeyUseRow[],
      )
      .compile();
  const dialect = template(1).sql;
  let byRows = statements.get(dialect);
  if (byRows === undefined) statements.set(dialect, (byRows = new Map()));
  const known = byRows;
  return (n) => {
    let text = known.get(n);
    if (text === undefined) {
      const q = template(n);
      if (q.parameters.length !== n * 7 || q.parameters.some((p, i) => p !== i)) {
        throw new Error('key_uses insert: unexpected parameter order');
      }
      text = q.sql;
      known.set(n, text);
    }
    return text;
  };
}

/** Inserts the rows with a few multi-row statements; the caller decides the transaction. */
export async function insertKeyUses(db: Kysely<Database>, rows: readonly KeyUseRow[]): Promise<void> {
  const statement = statementsFor(db);
  let i = 0;
  while (i < rows.length) {
    let n = KEY_USE_INSERT_CHUNK;
    while (n > rows.length - i) n >>= 1;
    const params = new Array<unknown>(n * 7);
    for (let j = 0, k = 0; j < n; j++) {
      const r = rows[i + j]!;
      params[k++] = r.key_id;
      params[k++] = r.workspace_id;
      params[k++] = r.at;
      params[k++] = r.ip_masked;
      params[k++] = r.method;
      params[k++] = r.route;
      params[k++] = r.status;
    }
    await db.executeQuery(CompiledQuery.raw(statement(n), params));
    i += n;
  }
}

/** A key's uses in its workspace, newest first, strictly after `before` in that order. */
export async function listKeyUses(
  db: Kysely<Database>,
  q: { workspaceId: string; keyId: string; before?: KeyUseCursor; limit: number },
): Promise<KeyUse[]> {
  let query = db
    .selectFrom('key_uses')
    .select(['id', 'key_id', 'workspace_id', 'at', 'ip_masked', 'method', 'route', 'status'])
    .where('key_id', '=', q.keyId)
    .where('workspace_id', '=', q.workspaceId);
  const before = q.before;
  if (before) {
    // (at, id) < (before.at, before.id), written so that `at <= …` bounds the (key_id, at) index range.
    query = query
      .where('at', '<=', before.at)
      .where((eb) => eb.or([eb('at', '<', before.at), eb('id', '<', before.id)]));
  }
  const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at), status: Number(r.status) }));
}

/** Rows recorded before the cutoff; the scan walks key_uses_at, oldest first. */
export const KEY_USES_PRUNE: PruneTarget<'key_uses'> = {
  table: 'key_uses',
  key: ['id'],
  order: 'at',
  expired: (eb, cutoff) => eb('key_uses.at', '<', cutoff),
};
