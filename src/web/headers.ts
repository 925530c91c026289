// Every page's security headers, built in one place: the Content-Security-Policy from a page's rules (what it may
// load, run, post to and be framed by), and the headers that go with it. Guarantee: `default-src 'self'` always,
// and a page framable by nobody also says so with X-Frame-Options for browsers without CSP frame-ancestors.

/**
 * Keywords and hashes are written bare here and quoted in the header; schemes (`data:`, `blob:`) and origins as they
 * are. A hash (`sha256-…`) allows one inline element; never put one beside `unsafe-inline`, which it would switch off.
 */
export type Source =
  'self' | 'none' | 'unsafe-inline' | 'data:' | 'blob:' | `https://${string}` | `http://${string}` | `sha256-${string}`;

/** What a page may do beyond its own origin's defaults, one rule per directive. */
export type CspRules = {
  scripts?: readonly Source[];
  /** `unsafe-inline` for pages whose libraries write style attributes or elements (pdf.js, Redoc). */
  styles?: readonly Source[];
  images?: readonly Source[];
  fonts?: readonly Source[];
  connect?: readonly Source[];
  workers?: readonly Source[];
  objects?: readonly Source[];
  baseUri?: readonly Source[];
  formActions?: readonly Source[];
  /** `none`, or the one origin allowed to frame the page (an embed session's). */
  frameAncestors?: readonly ['none'] | readonly [Source];
};

const DIRECTIVE: Record<keyof CspRules, string> = {
  scripts: 'script-src',
  styles: 'style-src',
  images: 'img-src',
  fonts: 'font-src',
  connect: 'connect-src',
  workers: 'worker-src',
  objects: 'object-src',
  baseUri: 'base-uri',
  formActions: 'form-action',
  frameAncestors: 'frame-ancestors',
};

const quote = (s: Source) =>
  s === 'self' || s === 'none' || s === 'unsafe-inline' || s.startsWith('sha256-') ? `'${s}'` : s;

/** What a page that draws PDFs with pdf.js needs: canvases as data:/blob: images, inline styles, a blob: worker. */
export const PDF_VIEWER: CspRules = {
  images: ['self', 'data:', 'blob:'],
  styles: ['self', 'unsafe-inline'],
  scripts: ['self'],
  workers: ['self', 'blob:'],
};

/** Images of a page whose rules name none: the page shell's empty icon (`<link rel="icon" href="data:,">`, web/html.ts). */
const SHELL_IMAGES: readonly Source[] = ['self', 'data:'];

/**
 * The policy as directives (helmet's `contentSecurityPolicy.directives` takes them as they are): `default-src`
 * first, then `img-src` when the rules name no images (SHELL_IMAGES, or the browser logs the refused icon), then the
 * rules in the order they are written, so a page's header reads as its rules do.
 */
export function cspDirectives(rules: CspRules): Record<string, string[]> {
  const out: Record<string, string[]> = { 'default-src': ["'self'"] };
  if (!rules.images) out['img-src'] = SHELL_IMAGES.map(quote);
  for (const [rule, sources] of Object.entries(rules) as [keyof CspRules, readonly Source[] | undefined][])
    if (sources) out[DIRECTIVE[rule]] = sources.map(quote);
  return out;
}

export const cspHeader = (rules: CspRules): string =>
  Object.entries(cspDirectives(rules))
    .map(([name, sources]) => `${name} ${sources.join(' ')}`)
    .join('; ');

export type PageHeaderOptions = {
  /** Every page says who may frame it. */
  csp: CspRules & Required<Pick<CspRules, 'frameAncestors'>>;
  /** X-Content-Type-Options: nosniff. */
  noSniff?: boolean;
  /** X-Robots-Tag: noindex, nofollow (besides the page's own robots meta). */
  noIndex?: boolean;
};

/**
 * Headers of a server-rendered page whose URL may hold a credential: no referrer, never cached, the page's CSP,
 * and X-Frame-Options DENY unless an origin may frame it.
 */
export function pageHeaders(o: PageHeaderOptions): Record<string, string> {
  const framable = o.csp.frameAncestors[0] !== 'none';
  return {
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    ...(framable ? {} : { 'x-frame-options': 'DENY' }),
    ...(o.noSniff ? { 'x-content-type-options': 'nosniff' } : {}),
    ...(o.noIndex ? { 'x-robots-tag': 'noindex, nofollow' } : {}),
    'content-security-policy': cspHeader(o.csp),
  };
}
