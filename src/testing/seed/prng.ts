// A seeded PRNG (sfc32) for the seeder: the same seed gives the same history, ids and tokens included, so runs compare.
import { orderedId, type IdPrefix } from '../../lib/ids.js';

export type Rng = {
  /** [0, 1) */
  next(): number;
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
  pick<T>(xs: readonly T[]): T;
  hex(chars: number): string;
  /** An id as newId makes it: `prefix_` + 24 hex. */
  id(prefix: IdPrefix): string;
  /** An id as newOrderedId makes it at time `t`. */
  orderedId(prefix: IdPrefix, t: number): string;
  /** `evt_` + 32 hex, as newEventId makes it at time `t`. */
  eventId(t: number): string;
  bytes(n: number): Buffer;
};

export function createRng(seed: number): Rng {
  let a = 0x9e3779b9 ^ seed;
  let b = 0x243f6a88 ^ (seed * 31);
  let c = 0xb7e15162;
  let d = 1;
  const u32 = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 16; i++) u32();
  const hex = (chars: number): string => {
    let s = '';
    while (s.length < chars) s += u32().toString(16).padStart(8, '0');
    return s.slice(0, chars);
  };
  const next = () => u32() / 4294967296;
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    hex,
    id: (prefix) => `${prefix}_${hex(24)}`,
    orderedId: (prefix, t) => orderedId(prefix, t, hex(12)),
    eventId: (t) => orderedId('evt', t, hex(20)),
    bytes(n) {
      const out = Buffer.alloc(n);
      for (let i = 0; i < n; i += 4) out.writeUInt32LE(u32(), Math.min(i, n - 4));
      return out;
    },
  };
}
