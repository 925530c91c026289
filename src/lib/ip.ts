// Guarantee: allowlist entries are saved only in one canonical form, and a caller matches only what the list names.
import { MAX_ALLOWLIST_ENTRIES } from '../limits.js';

/** A parsed address. IPv4-mapped IPv6 is reported as the IPv4 it embeds. `value` is an unsigned 32-bit int. */
export type ParsedAddress = { kind: 4; value: number } | { kind: 6; parts: number[] };

export type AllowlistResult = { ok: true; list: string[] } | { ok: false; entry: string; reason: string };

// Longest valid entry is 45 characters of IPv6-with-dotted-tail plus "/128"; anything longer is refused cheaply.
const MAX_ENTRY_LENGTH = 64;

const V4_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const V6_GROUP = /^[0-9a-fA-F]{1,4}$/;
const V6_CHARS = /^[0-9a-fA-F:.]+$/;
const PREFIX = /^(?:0|[1-9][0-9]{0,2})$/;

/** Strict dotted-quad decimal only: no octal, hex, short or leading-zero forms. */
export function parseIPv4(s: string): number | null {
  if (s.length < 7 || s.length > 15) return null;
  const octets = s.split('.');
  if (octets.length !== 4) return null;
  let value = 0;
  for (const o of octets) {
    if (!V4_OCTET.test(o)) return null;
    const n = Number(o);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

/** RFC 4291 text forms, with an optional strict dotted-quad tail. Zone ids, brackets and ports are refused. */
export function parseIPv6(s: string): number[] | null {
  if (s.length < 2 || s.length > 45 || !V6_CHARS.test(s)) return null;
  const dbl = s.indexOf('::');
  if (dbl !== -1 && s.indexOf('::', dbl + 1) !== -1) return null;
  const head = dbl === -1 ? s : s.slice(0, dbl);
  const tail = dbl === -1 ? '' : s.slice(dbl + 2);
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const last = dbl === -1 ? headGroups : tailGroups;
  // A dotted tail stands for the final two groups.
  let v4: number | null = null;
  if (last.length > 0 && last[last.length - 1]!.includes('.')) {
    v4 = parseIPv4(last.pop()!);
    if (v4 === null) return null;
  }
  const explicit = headGroups.length + tailGroups.length + (v4 === null ? 0 : 2);
  if (dbl === -1 ? explicit !== 8 : explicit > 7) return null;
  const parts: number[] = [];
  for (const g of headGroups) {
    if (!V6_GROUP.test(g)) return null;
    parts.push(parseInt(g, 16));
  }
  for (let i = explicit; i < 8; i++) parts.push(0);
  for (const g of tailGroups) {
    if (!V6_GROUP.test(g)) return null;
    parts.push(parseInt(g, 16));
  }
  if (v4 !== null) parts.push(Math.floor(v4 / 65536), v4 % 65536);
  return parts;
}

const isV4Mapped = (p: readonly number[]): boolean =>
  p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff;

/** Parses a bare address (no prefix). IPv4-mapped IPv6 comes back as IPv4 so both spellings compare equal. */
export function parseAddress(address: string): ParsedAddress | null {
  if (address.includes(':')) {
    const parts = parseIPv6(address);
    if (parts === null) return null;
    if (isV4Mapped(parts)) return { kind: 4, value: parts[6]! * 65536 + parts[7]! };
    return { kind: 6, parts };
  }
  const value = parseIPv4(address);
  return value === null ? null : { kind: 4, value };
}

export const formatIPv4 = (v: number): string =>
  `${Math.floor(v / 16777216) % 256}.${Math.floor(v / 65536) % 256}.${Math.floor(v / 256) % 256}.${v % 256}`;

/** RFC 5952: lower case, no leading zeros, the longest (first on a tie) run of two or more zero groups as "::". */
export function formatIPv6(parts: readonly number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (parts[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && parts[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: readonly number[]) => xs.map((x) => x.toString(16)).join(':');
  if (bestStart === -1) return hex(parts);
  return `${hex(parts.slice(0, bestStart))}::${hex(parts.slice(bestStart + bestLen))}`;
}

const formatParsed = (a: ParsedAddress): string => (a.kind === 4 ? formatIPv4(a.value) : formatIPv6(a.parts));

const v4Mask = (prefix: number): number => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);

/** Bits of group `i` kept by an IPv6 prefix, as a 16-bit mask. */
const v6GroupMask = (prefix: number, i: number): number => {
  const bits = Math.min(16, Math.max(0, prefix - 16 * i));
  return bits === 0 ? 0 : (0xffff << (16 - bits)) & 0xffff;
};

type Block = { kind: 4; net: number; mask: number } | { kind: 6; net: number[]; prefix: number };

type ParsedEntry = { ok: true; block: Block; value: string } | { ok: false; reason: string };

function parseEntry(raw: string): ParsedEntry {
  const entry = raw.trim();
  if (entry === '') return { ok: false, reason: 'empty entry' };
  if (entry.length > MAX_ENTRY_LENGTH) return { ok: false, reason: 'not an IP address or CIDR block' };
  const slash = entry.indexOf('/');
  const addrText = slash === -1 ? entry : entry.slice(0, slash);

  if (addrText.includes(':')) {
    const parts = parseIPv6(addrText);
    if (parts === null) return { ok: false, reason: 'not a valid IPv6 address or block' };
    const mapped = isV4Mapped(parts);
    if (slash === -1) {
      // Bare IPv4-mapped is stored as the plain IPv4 it names: callers are matched in IPv4 form anyway,
      // and this keeps one spelling per address so duplicates collapse.
      if (mapped) {
        const value = parts[6]! * 65536 + parts[7]!;
        return { ok: true, block: { kind: 4, net: value, mask: 0xffffffff }, value: formatIPv4(value) };
      }
      return { ok: true, block: { kind: 6, net: parts, prefix: 128 }, value: formatIPv6(parts) };
    }
    // The spec refuses mapped addresses with a prefix; an IPv4 block must be written as IPv4.
    if (mapped)
      return { ok: false, reason: 'IPv4-mapped IPv6 address with a prefix length; write the IPv4 block instead' };
    const prefix = parsePrefix(entry.slice(slash + 1), 128);
    if (prefix === null) return { ok: false, reason: 'prefix length must be a decimal number from 0 to 128' };
    const net = parts.map((p, i) => p & v6GroupMask(prefix, i));
    const text = formatIPv6(net);
    return { ok: true, block: { kind: 6, net, prefix }, value: prefix === 128 ? text : `${text}/${prefix}` };
  }

  const addr = parseIPv4(addrText);
  if (addr === null) return { ok: false, reason: 'not a valid IPv4 address (dotted decimal, four parts)' };
  if (slash === -1) return { ok: true, block: { kind: 4, net: addr, mask: 0xffffffff }, value: formatIPv4(addr) };
  const prefix = parsePrefix(entry.slice(slash + 1), 32);
  if (prefix === null) return { ok: false, reason: 'prefix length must be a decimal number from 0 to 32' };
  const mask = v4Mask(prefix);
  const net = (addr & mask) >>> 0;
  const text = formatIPv4(net);
  return { ok: true, block: { kind: 4, net, mask }, value: prefix === 32 ? text : `${text}/${prefix}` };
}

// Leading zeros are refused ("/08") so every prefix has exactly one spelling.
function parsePrefix(s: string, max: number): number | null {
  if (!PREFIX.test(s)) return null;
  const n = Number(s);
  return n <= max ? n : null;
}

export function canonicaliseEntry(entry: string): { ok: true; value: string } | { ok: false; reason: string } {
  if (typeof entry !== 'string') return { ok: false, reason: 'entry must be a string' };
  const parsed = parseEntry(entry);
  return parsed.ok ? { ok: true, value: parsed.value } : parsed;
}

/** Whole-list save rule: any bad entry refuses the save; duplicates collapse in first-seen order; at most 50 remain. */
export function canonicaliseAllowlist(entries: string[]): AllowlistResult {
  const seen = new Set<string>();
  for (const entry of entries) {
    const r = canonicaliseEntry(entry);
    if (!r.ok) return { ok: false, entry: String(entry), reason: r.reason };
    seen.add(r.value);
    // Stop early so an oversized request costs no more than 51 distinct entries of work beyond parsing.
    if (seen.size > MAX_ALLOWLIST_ENTRIES)
      return { ok: false, entry: '', reason: `at most ${MAX_ALLOWLIST_ENTRIES} entries` };
  }
  return { ok: true, list: [...seen] };
}

/** Canonical text of a caller address: IPv4-mapped becomes IPv4, IPv6 is RFC 5952. Zone ids and anything else: null. */
export function normaliseAddress(address: string | undefined | null): string | null {
  if (typeof address !== 'string') return null;
  const a = parseAddress(address);
  return a === null ? null : formatParsed(a);
}

export type AllowlistMatcher = (address: string | undefined | null) => boolean;

function blockMatches(b: Block, a: ParsedAddress): boolean {
  if (b.kind === 4) return a.kind === 4 && (a.value & b.mask) >>> 0 === b.net;
  if (a.kind !== 6) return false;
  for (let i = 0; i < 8; i++) {
    const m = v6GroupMask(b.prefix, i);
    if (m === 0) break;
    if ((a.parts[i]! & m) !== b.net[i]) return false;
  }
  return true;
}

/**
 * Pre-parses a stored list into a matcher. Entries that fail to parse match nothing (fail closed), so a
 * corrupted list never widens access. IPv6 blocks (even ::/0) never match IPv4 or IPv4-mapped callers.
 */
export function compileAllowlist(list: readonly string[]): AllowlistMatcher {
  if (list.length === 0) return () => true;
  const blocks: Block[] = [];
  for (const entry of list) {
    const p = typeof entry === 'string' ? parseEntry(entry) : null;
    if (p?.ok) blocks.push(p.block);
  }
  return (address) => {
    if (typeof address !== 'string') return false;
    const a = parseAddress(address);
    if (a === null) return false;
    for (const b of blocks) if (blockMatches(b, a)) return true;
    return false;
  };
}

/** One check against a stored list (the /v1 gate keeps a compiled matcher per cached key instead). */
export const isAllowed = (list: readonly string[], address: string | undefined | null): boolean =>
  compileAllowlist(list)(address);

/**
 * Audit-view form. IPv4 (and IPv4-mapped): last octet hidden, "203.0.113.x". IPv6: the first three groups
 * (the /48 routing prefix) written in full without compression, then "::x" for the hidden 80 bits,
 * e.g. "2001:db8:0::x". Unparseable: null.
 */
export function maskIp(address: string | undefined | null): string | null {
  if (typeof address !== 'string') return null;
  const a = parseAddress(address);
  if (a === null) return null;
  if (a.kind === 4) {
    const text = formatIPv4(a.value);
    return `${text.slice(0, text.lastIndexOf('.'))}.x`;
  }
  return `${a.parts
    .slice(0, 3)
    .map((p) => p.toString(16))
    .join(':')}::x`;
}

/**
 * The bucket a client address is counted in by per-address limits: the address itself for IPv4 (and IPv4-mapped),
 * its /64 for IPv6, where one subscriber usually holds the whole /64. Unparseable: null.
 */
export function addressBucket(address: string | undefined | null): string | null {
  if (typeof address !== 'string') return null;
  const a = parseAddress(address);
  if (a === null) return null;
  return a.kind === 4 ? formatIPv4(a.value) : `${formatIPv6([...a.parts.slice(0, 4), 0, 0, 0, 0])}/64`;
}
