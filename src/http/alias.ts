// The alias address with a path (ALIAS_BASE_URL=https://legacy.example.com/esign). Guarantees: `/esign/v1` and
// everything under it is rewritten to `/v1…` before routing, so the /v1 gate, the rate limit (keyed by API key),
// idempotency (fingerprinted on the canonical path), request-shape checks, errors and logs all see one canonical
// request: a key has one window and one set of idempotency records across both addresses. Nothing else under the
// alias's path is served (`/esign/docs`, `/esign/other`: 404), since pages and links live at BASE_URL only; the API
// reference is reachable as `/esign/v1/openapi.json`. An alias without a path needs no rewrite: routing ignores the
// host. BASE_URL's own path, if any, is left to the proxy in front, as before.

/** Fastify's `rewriteUrl` for this alias; undefined when the alias has no path (or there is none). */
export function aliasRewrite(aliasBaseUrl: string | null): ((req: { url?: string }) => string) | undefined {
  if (!aliasBaseUrl) return undefined;
  // The pathname as URL spells it (percent-encoded): the form a client puts on the request line.
  const prefix = new URL(aliasBaseUrl).pathname.replace(/\/+$/, '');
  if (prefix === '') return undefined;
  const api = `${prefix}/v1`;
  return (req) => {
    const url = req.url ?? '/';
    if (!url.startsWith(api)) return url;
    // `/esign/v1`, `/esign/v1/…` or `/esign/v1?…`; not `/esign/v1x`.
    const next = url.charAt(api.length);
    return next === '' || next === '/' || next === '?' ? url.slice(prefix.length) : url;
  };
}
