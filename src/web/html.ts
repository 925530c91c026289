// What every server-rendered page shares: escaping, JSON inside HTML, the visitor's language, the <head>, the
// one-message result page and the too-many-requests page. Names no feature: what a page links is given by its caller.
import { DEFAULT_LOCALE, dirOf, fill, isKnownLocale, strings, type Locale } from '../i18n/i18n.js';

/** Text or an attribute value, escaped for HTML (quotes included, so it is safe in either). */
export const esc = (s: string | number): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a data block: nothing in it may close the element or start a comment. */
export const jsonForHtml = (v: unknown): string =>
  JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The first of the client's Accept-Language tags (by order, then q) that is a known locale; else `fallback` (the
 * default locale, or e.g. the document's).
 */
export function localeFromAcceptLanguage(header: string | undefined, fallback: Locale = DEFAULT_LOCALE): Locale {
  const tags = String(header ?? '')
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? 1,
      );
      return { tag: (tag ?? '').toLowerCase().split('-')[0]!, q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((t) => t.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return tags.map((t) => t.tag).find(isKnownLocale) ?? fallback;
}

export type HeadOptions = {
  /** The page's language (`<html lang>`; a right-to-left one adds `dir="rtl"`). */
  locale: string;
  title: string;
  /** A page for one visitor (its URL holds a link token, or it answers them alone): no referrer, not indexed. */
  private?: boolean;
  stylesheets?: readonly string[];
  /** Tags after the stylesheets, in order, from the helpers below. */
  tags?: readonly string[];
};

/** `dir="rtl"` (with its leading space) for a right-to-left locale, else nothing: left to right is the default. */
export const dirAttr = (locale: string): string =>
  isKnownLocale(locale) && dirOf(locale) === 'rtl' ? ' dir="rtl"' : '';

/** The document's start, up to and including `</head>`. */
export function htmlHead(o: HeadOptions): string {
  const lines = [
    '<!doctype html>',
    `<html lang="${esc(o.locale)}"${dirAttr(o.locale)}>`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    ...(o.private
      ? ['<meta name="referrer" content="no-referrer">', '<meta name="robots" content="noindex, nofollow">']
      : []),
    '<link rel="icon" href="data:,">',
    `<title>${esc(o.title)}</title>`,
    ...(o.stylesheets ?? []).map((href) => `<link rel="stylesheet" href="${esc(href)}">`),
    ...(o.tags ?? []),
  ];
  return `${lines.join('\n')}\n</head>`;
}

export const moduleScript = (src: string): string => `<script type="module" src="${esc(src)}"></script>`;
export const deferredScript = (src: string): string => `<script defer src="${esc(src)}"></script>`;
export const modulePreload = (href: string): string => `<link rel="modulepreload" href="${esc(href)}">`;
/** A JSON data block a page's script reads by id. */
export const jsonBlock = (id: string, value: unknown): string =>
  `<script type="application/json" id="${esc(id)}">${jsonForHtml(value)}</script>`;

/** A plain same-origin link a result page offers (a download: no script needed). */
export type ResultLink = { href: string; label: string; download?: string };

/**
 * A page that only says one thing: a headline, further lines, an icon, and its state for scripts and tests; and
 * the links it offers, if any. `mark`: markup a caller built (a workspace's logo and name) above the icon.
 */
export function resultPage(
  head: string,
  state: string,
  icon: string,
  [first, ...rest]: readonly string[],
  links: readonly ResultLink[] = [],
  mark = '',
): string {
  const a = (l: ResultLink) =>
    `<a class="button primary" href="${esc(l.href)}"${l.download ? ` download="${esc(l.download)}"` : ''}>${esc(l.label)}</a>`;
  return `${head}
<body data-state="${esc(state)}">
<main class="closed">
  <div id="status" class="status result${mark ? ' branded' : ''}" role="status" data-state="${esc(state)}">
    ${mark}<span class="result-icon" aria-hidden="true">${icon}</span>
    <h1>${esc(first ?? '')}</h1>
    ${rest.map((line) => `<p>${esc(line)}</p>`).join('\n    ')}
    ${links.map((l) => `<p class="result-link">${a(l)}</p>`).join('\n    ')}
  </div>
</main>
</body>
</html>
`;
}

/** The answer to a browser over the per-address limit: what happened and how long to wait, in its language. */
export function renderTooManyRequestsPage(
  acceptLanguage: string | undefined,
  seconds: number,
  o: { stylesheets: readonly string[] },
): string {
  const l = localeFromAcceptLanguage(acceptLanguage);
  const s = strings(l, 'page');
  const head = htmlHead({ locale: l, title: s.title, private: true, stylesheets: o.stylesheets });
  return resultPage(head, 'rate_limited', '◷', [s.tooManyRequests, fill(s.tryAgainIn, { seconds })]);
}
