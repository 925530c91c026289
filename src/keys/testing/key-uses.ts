// Fixtures of the key-use tests: key_uses rows counted straight from the table, for every key or one.
import type { Db } from '../../db/db.js';

export const countRows = async (db: Db, keyId?: string): Promise<number> => {
  let q = db.kysely.selectFrom('key_uses').select((eb) => eb.fn.countAll<number>().as('n'));
  if (keyId) q = q.where('key_id', '=', keyId);
  return Number((await q.executeTakeFirstOrThrow()).n);
};
