// A workspace's default language (migration 023): what a signing request, a template instance or a send takes when
// it names no `locale`. A `locale` the caller gives always wins and is checked as before (unknown: 400); the default
// is checked when it is set, and one no longer known reads as English, so a default never fails a request.
import { DEFAULT_LOCALE, KNOWN_LOCALES, localeOrDefault, type Locale } from '../i18n/i18n.js';

/** The language of what names none: the workspace's default, or DEFAULT_LOCALE (English) without one. */
export const defaultLocaleOf = (ws: { defaultLocale?: string | null }): Locale =>
  ws.defaultLocale ? localeOrDefault(ws.defaultLocale) : DEFAULT_LOCALE;

/** A typed setting: a known tag, `none` or empty for none (English), or undefined when the tag is unknown. */
export function parseLocaleSetting(v: string): Locale | null | undefined {
  const tag = v.trim();
  if (tag === '' || tag === 'none') return null;
  return (KNOWN_LOCALES as readonly string[]).includes(tag) ? (tag as Locale) : undefined;
}
