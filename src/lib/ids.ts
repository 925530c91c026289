// Identifiers: a prefix and random hex. The random bytes come from a pool refilled 4 KB at a time from the same
// CSPRNG, one call per ~300 ids instead of one each: a call cost 12–24 µs on the bench machine, and a create writes
// dozens of ids (Node's own randomUUID caches the same way). Ids are not secrets; keys, tokens and webhook secrets
// draw their own bytes.
import { randomFillSync } from 'node:crypto';

export type IdPrefix =
  | 'ws'
  | 'key'
  | 'hook'
  | 'doc'
  | 'sr'
  | 'tpl'
  | 'tin'
  | 'del'
  | 'att'
  | 'aud'
  | 'ses'
  | 'usr'
  | 'cpy'
  | 'vc'
  | 'qes'
  | 'bulk'
  | 'drf'
  | 'mail'
  | 'sms';

const pool = Buffer.allocUnsafe(4096);
let used = pool.length;

/** `bytes` fresh random bytes as lowercase hex (each byte handed out once). */
function poolHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/** Prefixed random id: `hook_` + 24 lowercase hex (96 bits). */
export const newId = (prefix: IdPrefix): string => `${prefix}_${poolHex(12)}`;

/**
 * A time-ordered id of the same shape as newId's (or an event id's): 12 hex of `ms` (the wall clock; milliseconds
 * fit 12 hex until the year 10889), then the random hex. For the rows written and rewritten in volume (deliveries,
 * events, outboxes): rows made together sit together in every index keyed by their id, so a batch's writes touch a
 * few index pages instead of one page each (on PostgreSQL, a full page written to the WAL after each checkpoint).
 */
export const orderedId = (prefix: string, ms: number, randomHex: string): string =>
  `${prefix}_${Math.floor(ms).toString(16).padStart(12, '0')}${randomHex}`;

/** `del_` etc. + 12 hex of the time + 12 random hex (48 bits: a clash needs millions of ids in one millisecond). */
export const newOrderedId = (prefix: IdPrefix): string => orderedId(prefix, Date.now(), poolHex(6));

/** Event ids are fixed by the spec: `evt_` + 32 hex; time-ordered, with 80 random bits. */
export const newEventId = (): string => orderedId('evt', Date.now(), poolHex(10));
