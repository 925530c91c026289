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

/** Event ids are fixed by the spec: `evt_` + 32 hex. */
export const newEventId = (): string => `evt_${poolHex(16)}`;
