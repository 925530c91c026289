// The product's words: which languages exist, a message by key, placeholders, dates. Guarantees: a locale is
// "known" only when its catalogue is complete, and the compiler checks it: en.json defines the keys, and each other
// language must have exactly those keys (a missing or invented key fails to compile, naming it). Values are inserted
// raw everywhere: HTML callers escape the result.
//
// The catalogues are data, one JSON file per language (the format translation tools read), loaded once. Keys are
// `section.name` (mail, page, copy, review, sms, dashboard, audit, verify). Placeholders are `{name}`; quotation marks
// follow each language's convention, so they live in the strings. Verification problems (`verify.problem.<code>`) are
// one sentence per code of pki/problems.ts, with that code's variables. SMS texts are one line; in every language written
// in Latin letters they use only GSM-7 characters (straight quotes, no guillemets or no-break spaces, Polish without
// its diacritics, as Polish SMS usually are), so a message with plain names fits one segment (sms/messages.ts);
// Japanese and Arabic travel as UCS-2. Arabic is written right to left (`dirOf`). Dashboard texts are plain text: a view escapes them and may fill a placeholder with markup of
// its own (dashboard/words.ts); in English, statuses and roles are the API's own words.
import { createRequire } from 'node:module';

type English = typeof import('./en.json', { with: { type: 'json' } });
type German = typeof import('./de.json', { with: { type: 'json' } });
type French = typeof import('./fr.json', { with: { type: 'json' } });
type Spanish = typeof import('./es.json', { with: { type: 'json' } });
type Italian = typeof import('./it.json', { with: { type: 'json' } });
type Dutch = typeof import('./nl.json', { with: { type: 'json' } });
type Portuguese = typeof import('./pt.json', { with: { type: 'json' } });
type Polish = typeof import('./pl.json', { with: { type: 'json' } });
type Swedish = typeof import('./sv.json', { with: { type: 'json' } });
type Japanese = typeof import('./ja.json', { with: { type: 'json' } });
type Arabic = typeof import('./ar.json', { with: { type: 'json' } });

export type MessageKey = keyof English;
export type Catalogue = { readonly [K in MessageKey]: string };

/** What a language gets wrong: keys it lacks, keys English does not have, values that are not text. */
type Mismatch<T> = {
  missing: Exclude<MessageKey, keyof T>;
  unknown: Exclude<keyof T, MessageKey>;
  notText: { [K in keyof T]: T[K] extends string ? never : K }[keyof T];
};
type Agrees<T> =
  Mismatch<T> extends { missing: never; unknown: never; notText: never }
    ? true
    : { [K in keyof Mismatch<T>]: Mismatch<T>[K] };
// A language that gets a key wrong makes this line fail to compile, and the error names the keys.
const agree: [
  Agrees<English>,
  Agrees<German>,
  Agrees<French>,
  Agrees<Spanish>,
  Agrees<Italian>,
  Agrees<Dutch>,
  Agrees<Portuguese>,
  Agrees<Polish>,
  Agrees<Swedish>,
  Agrees<Japanese>,
  Agrees<Arabic>,
] = [true, true, true, true, true, true, true, true, true, true, true];
void agree;

const load = createRequire(import.meta.url) as (file: string) => Catalogue;

export const KNOWN_LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'pl', 'sv', 'ja', 'ar'] as const;
export type Locale = (typeof KNOWN_LOCALES)[number];

/** Each language by its own name ("Deutsch", "日本語"), for choosers: a person finds their language in its words. */
export const LOCALE_NAMES: ReadonlyArray<{ code: Locale; name: string }> = KNOWN_LOCALES.map((code) => ({
  code,
  name: new Intl.DisplayNames([code], { type: 'language' }).of(code) ?? code,
}));
export const DEFAULT_LOCALE: Locale = 'en';

/** Exact tags only: `de` is known, `de-DE`, `DE` and `de_DE` are not (callers answer 400). */
export const isKnownLocale = (tag: unknown): tag is Locale =>
  typeof tag === 'string' && (KNOWN_LOCALES as readonly string[]).includes(tag);

/** A stored tag as a locale: one we no longer know (or never checked) falls back to the default. */
export const localeOrDefault = (tag: string): Locale => (isKnownLocale(tag) ? tag : DEFAULT_LOCALE);

export const catalogues: Readonly<Record<Locale, Catalogue>> = {
  en: load('./en.json'),
  de: load('./de.json'),
  fr: load('./fr.json'),
  es: load('./es.json'),
  it: load('./it.json'),
  nl: load('./nl.json'),
  pt: load('./pt.json'),
  pl: load('./pl.json'),
  sv: load('./sv.json'),
  ja: load('./ja.json'),
  ar: load('./ar.json'),
};

/** Languages written right to left: their pages and e-mails carry `dir="rtl"`. */
const RIGHT_TO_LEFT: ReadonlySet<Locale> = new Set<Locale>(['ar']);

/** The writing direction of `locale`, for a `dir` attribute. */
export const dirOf = (locale: Locale): 'ltr' | 'rtl' => (RIGHT_TO_LEFT.has(locale) ? 'rtl' : 'ltr');

export type Vars = Readonly<Record<string, string | number>>;

/** Fills `{name}` placeholders. A placeholder without a value is a programming error, so it throws. */
export function fill(template: string, vars: Vars = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`missing value for {${name}} in "${template}"`);
    return String(v);
  });
}

function catalogue(locale: Locale): Catalogue {
  const cat = catalogues[locale];
  if (!cat) throw new Error(`unknown locale "${String(locale)}"`);
  return cat;
}

/** The message `key` in `locale`, placeholders filled. */
export function t(locale: Locale, key: MessageKey, vars?: Vars): string {
  return fill(catalogue(locale)[key], vars);
}

type PrefixOf<K> = K extends `${infer P}.${string}` ? P : never;
/** A key's first segment: the part of the product it belongs to (`mail`, `page`, `review`, `sms`, …). */
export type Section = PrefixOf<MessageKey>;
type KeyIn<S extends string, K = MessageKey> = K extends `${S}.${infer Rest}` ? Rest : never;
/** Every string of one section, keyed without the `section.` prefix. */
export type Strings<S extends Section> = { readonly [K in KeyIn<S>]: string };

const sections = new Map<string, object>();

/**
 * Every string of `section` in `locale`, keyed without its prefix and in the catalogue's order (pages embed them
 * as JSON). Values may hold placeholders; fill them with `fill()` or on the client. The object is shared: frozen.
 */
export function strings<S extends Section>(locale: Locale, section: S): Strings<S> {
  const id = `${locale}:${section}`;
  let out = sections.get(id);
  if (!out) {
    const prefix = `${section}.`;
    const picked: Record<string, string> = {};
    for (const [k, v] of Object.entries(catalogue(locale)))
      if (k.startsWith(prefix)) picked[k.slice(prefix.length)] = v;
    sections.set(id, (out = Object.freeze(picked)));
  }
  return out as Strings<S>;
}

// One formatter per locale: building an Intl.DateTimeFormat costs ~0.5 ms of main thread, paid per mail otherwise.
const dateTimeFormats = new Map<Locale, Intl.DateTimeFormat>();

/** Date and time in the locale's words, in UTC and labelled so, e.g. "6. Dezember 2026 um 10:00 UTC". */
export function formatDateTime(locale: Locale, ms: number): string {
  let f = dateTimeFormats.get(locale);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: 'UTC',
      timeZoneName: 'short',
    });
    dateTimeFormats.set(locale, f);
  }
  return f.format(ms);
}
