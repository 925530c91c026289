import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import { SEARCH_DAY_MS, SEARCH_PERIOD_MS } from './026-search-keys.js';

// Issue 25, writes of documents and signing requests on PostgreSQL: 026's key function is SQL with a FROM and an
// aggregate, which PostgreSQL cannot inline, so every index entry ran it as a query of its own (executor start and
// end per call: about 30 µs a title and 57 µs an e-mail, a quarter of a bulk load's server time). The same keys from
// a PL/pgSQL loop of plain expressions take 7 and 10 µs. It returns the same set of keys (no longer sorted and
// distinct: GIN keeps each key of a row once, and `@>` reads sets), so the indexes built on 026's function stay
// valid and are not rebuilt; the function keeps its identity, so the indexes keep naming it.
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`create or replace function signet_search_keys(at bigint, t text) returns text[]
    language plpgsql immutable strict parallel safe as $$
      declare
        l text := lower(t);
        d text := 'd' || (at / ${sql.lit(SEARCH_DAY_MS)}) || ':';
        p text := 'p' || (at / ${sql.lit(SEARCH_PERIOD_MS)}) || ':';
        keys text[] := '{}';
        piece text;
      begin
        for i in 1 .. length(l) - 2 loop
          piece := substr(l, i, 3);
          keys := array_append(keys, d || piece);
          keys := array_append(keys, p || piece);
        end loop;
        return keys;
      end
    $$`.execute(db);
}
