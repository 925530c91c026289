// The dashboard's words in one language, as its views use them (`it.h`, `it.t`, …). Catalogue text is ours and
// values are not: `h` escapes both (values with Eta's own escaping, so a filled-in value reads byte for byte as
// `<%= value %>` did) and inserts only the markup a view built with `tag`, `time` or `en`. A key no catalogue has
// throws, so a typo cannot render as an empty string.
import { Eta } from 'eta';
import { catalogues, fill, t, type Locale, type MessageKey, type Strings, type Vars } from '../i18n/i18n.js';
import { DOCUMENT_STATUSES, REQUEST_STATUSES, type DocumentStatus, type RequestStatus } from '../signing/states.js';
import { INSTANCE_STATUSES, type InstanceStatus } from '../templates/states.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../webhooks/states.js';
import { dirAttr } from '../web/html.js';
import { ROLES, type Role } from './people.repo.js';

export type DashboardKey = keyof Strings<'dashboard'>;
/** Words a service hands back (a refusal, a problem) for the page to say in the visitor's language. */
export type Message = { key: DashboardKey; vars?: Vars };

const escape = new Eta().config.escapeFunction;
// Catalogue text keeps its apostrophes as the views' literal text did; it sits in text or double-quoted attributes.
const escapeText = (s: string) => s.replace(/[&<>"]/g, (c) => escape(c));

/** Markup a view made itself, to go into a message as it is. */
export class Html {
  constructor(readonly html: string) {}
}

// Each status a page shows has its words (checked here by the compiler); anything else shows as the API names it.
const statusKey = (s: DocumentStatus | RequestStatus): MessageKey => `dashboard.status.${s}`;
const deliveryKey = (s: DeliveryStatus): MessageKey => `dashboard.delivery.${s}`;
const roleKey = (r: Role): MessageKey => `dashboard.role.${r}`;
const instanceKey = (s: InstanceStatus | 'expired'): MessageKey => `dashboard.instance.${s}`;
const among = <T extends string>(list: readonly T[], s: string): s is T => (list as readonly string[]).includes(s);

function words(locale: Locale) {
  const cat = catalogues[locale];
  const key = (k: string): MessageKey => {
    const full = `dashboard.${k}`;
    if (!(full in cat)) throw new Error(`no dashboard message "${k}"`);
    return full as MessageKey;
  };
  const h = (k: string, vars: Readonly<Record<string, string | number | Html>> = {}): string =>
    fill(
      escapeText(cat[key(k)]),
      Object.fromEntries(Object.entries(vars).map(([n, v]) => [n, v instanceof Html ? v.html : escape(v)])),
    );
  const plural = new Intl.PluralRules(locale);
  return {
    locale,
    /** Plain text (for a value the layout escapes, such as the title). */
    t: (k: string, vars?: Vars): string => t(locale, key(k), vars),
    /** HTML: print with `<%~ %>`. */
    h,
    /** `k.one` or `k.other` by the language's plural rule for `count`, which fills `{count}`. */
    hn: (k: string, count: number, vars: Readonly<Record<string, string | number | Html>> = {}): string =>
      h(`${k}.${plural.select(count) === 'one' ? 'one' : 'other'}`, { ...vars, count }),
    tag: (name: 'strong' | 'code', text: string | number): Html => new Html(`<${name}>${escape(text)}</${name}>`),
    time: (iso: string, text: string): Html => new Html(`<time datetime="${escape(iso)}">${escape(text)}</time>`),
    /** Text in another language (a language's own name), marked with its tag, in bold. */
    inLang: (lang: string, text: string): Html => new Html(`<strong lang="${escape(lang)}">${escape(text)}</strong>`),
    /** English from the API's error catalogue or the system, marked as such inside a page in another language. */
    en: (text: string): Html =>
      new Html(locale === 'en' || !text ? escape(text) : `<span lang="en">${escape(text)}</span>`),
    /** The attribute that marks an element holding such English (none on an English page). */
    enAttr: locale === 'en' ? '' : ' lang="en"',
    /** `<html>`'s direction attribute: ` dir="rtl"` for Arabic, none otherwise. */
    dirAttr: dirAttr(locale),
    roleText: (r: string): string => (among(ROLES, r) ? t(locale, roleKey(r)) : r),
    statusText: (s: string): string =>
      among(DOCUMENT_STATUSES, s) || among(REQUEST_STATUSES, s) ? t(locale, statusKey(s)) : s,
    deliveryText: (s: string): string => (among(DELIVERY_STATUSES, s) ? t(locale, deliveryKey(s)) : s),
    instanceText: (s: string): string =>
      among(INSTANCE_STATUSES, s) || s === 'expired' ? t(locale, instanceKey(s)) : s,
    capital: (s: string): string => s.replace(/^./, (c) => c.toLocaleUpperCase(locale)),
  };
}

export type Words = ReturnType<typeof words>;
const made = new Map<Locale, Words>();
/** The view helpers of `locale`, made once. */
export const wordsFor = (locale: Locale): Words => made.get(locale) ?? made.set(locale, words(locale)).get(locale)!;
