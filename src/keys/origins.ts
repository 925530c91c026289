// Embed origins: plain https origins only (scheme + host + optional port), stored canonical (lower-case, no default port).
import { MAX_EMBED_ORIGINS } from '../limits.js';

export function canonicaliseOrigin(raw: string): { ok: true; value: string } | { ok: false; reason: string } {
  const s = raw.trim();
  if (s.includes('*')) return { ok: false, reason: 'wildcards are not allowed' };
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (u.protocol !== 'https:') return { ok: false, reason: 'must be https' };
  if (u.username || u.password) return { ok: false, reason: 'credentials are not allowed' };
  if (u.search || s.includes('?')) return { ok: false, reason: 'a query is not allowed' };
  if (u.hash || s.includes('#')) return { ok: false, reason: 'a fragment is not allowed' };
  const afterHost = s.replace(/^https:\/\/[^/]*/i, '');
  if (afterHost !== '' && afterHost !== '/') return { ok: false, reason: 'a path is not allowed' };
  if (!u.hostname) return { ok: false, reason: 'a host is required' };
  return { ok: true, value: u.origin };
}

/**
 * An origin as a caller names it for an embed session: exactly a plain https origin, nothing around it (no
 * whitespace, not even a trailing "/"), canonicalised like the stored lists so the two compare equal.
 */
export function parseExactOrigin(raw: string): { ok: true; value: string } | { ok: false; reason: string } {
  if (raw !== raw.trim()) return { ok: false, reason: 'surrounding whitespace is not allowed' };
  if (/^https:\/\/[^/?#]*\/$/i.test(raw)) return { ok: false, reason: 'a path is not allowed, not even "/"' };
  return canonicaliseOrigin(raw);
}

/** Whether `origin` (canonical) is on a key's embed-origin list; an empty list allows none. */
export const originAllowed = (list: readonly string[], origin: string): boolean =>
  list.some((entry) => {
    const c = canonicaliseOrigin(entry);
    return c.ok && c.value === origin;
  });

export function canonicaliseOrigins(
  list: string[],
): { ok: true; list: string[] } | { ok: false; entry: string; reason: string } {
  const out: string[] = [];
  for (const entry of list) {
    const r = canonicaliseOrigin(entry);
    if (!r.ok) return { ok: false, entry, reason: r.reason };
    if (!out.includes(r.value)) out.push(r.value);
  }
  if (out.length > MAX_EMBED_ORIGINS) return { ok: false, entry: '', reason: `at most ${MAX_EMBED_ORIGINS} origins` };
  return { ok: true, list: out };
}
