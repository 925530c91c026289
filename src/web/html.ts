// What every server-rendered page shares: escaping, JSON inside HTML, and the visitor's language. Names no feature.
import { DEFAULT_LOCALE, isKnownLocale, type Locale } from '../i18n/i18n.js';

/** Text or an attribute value, escaped for HTML (quotes included, so it is safe in either). */
export const esc = (s: string | number): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a data block: nothing in it may close the element or start a comment. */
export const jsonForHtml = (v: unknown): string =>
  JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The first of the client's Accept-Language tags (by order, then q) that is a known locale; else the default. */
export function localeFromAcceptLanguage(header: string | undefined): Locale {
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
  return tags.map((t) => t.tag).find(isKnownLocale) ?? DEFAULT_LOCALE;
}
