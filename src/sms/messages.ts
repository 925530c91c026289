// The text of each SMS kind (wording: `sms.*` in the i18n catalogue). Guarantees: plain text, one line, no HTML; the
// link is never shortened; in languages written in Latin letters the fixed wording uses only the GSM-7 alphabet
// (straight quotes, no guillemets or no-break spaces; messages.test.ts checks), so a message with plain names fits one
// segment when it can; Japanese and Arabic travel as UCS-2 (70 characters a segment, 67 when split), kept short
// enough that plain names fit two; and a message never exceeds MAX_SMS_SEGMENTS: the title, then the workspace name,
// are cut (ending in "...") until it fits.
import { isKnownLocale, t, type Locale } from '../i18n/i18n.js';
import { oneLine } from '../mail/templates.js';
import { VERIFICATION_CODE_TTL_MS } from '../limits.js';

/** The kinds that carry the signer's link. */
export const SMS_TEMPLATE_NAMES = ['invitation', 'reminder', 'expiry_warning'] as const;
/** A signer's verification code (issue 22): the code instead of a link; `url` is not shown. */
export const SMS_CODE_TEMPLATE = 'verification_code';
export type SmsTemplateName = (typeof SMS_TEMPLATE_NAMES)[number] | typeof SMS_CODE_TEMPLATE;

const SMS_KEYS = {
  invitation: 'sms.invitation',
  reminder: 'sms.reminder',
  expiry_warning: 'sms.expiryWarning',
} as const satisfies Record<(typeof SMS_TEMPLATE_NAMES)[number], string>;

export const isSmsTemplateName = (name: unknown): name is SmsTemplateName =>
  name === SMS_CODE_TEMPLATE || (typeof name === 'string' && (SMS_TEMPLATE_NAMES as readonly string[]).includes(name));

export type SmsVars = {
  workspaceName: string;
  documentTitle: string;
  /** Accepted for symmetry with mail; not shown (the link is personal, and the name costs characters). */
  signerName: string;
  /** The signer's link, e.g. `https://signet.example/sign/<token>`; sent verbatim. */
  url: string;
  /** Epoch ms; shown as its UTC date, YYYY-MM-DD. */
  expiresAt: number;
  /** The verification code (template `verification_code` only). */
  code?: string;
};

export const MAX_SMS_SEGMENTS = 3;

// GSM 03.38: the basic alphabet (one septet each) and the extension table (two septets each, escape included).
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM7_EXTENDED = new Set('\f^{}\\[~]|€');

/** How a text travels: GSM-7 when every character is in the GSM alphabet, UCS-2 otherwise; and in how many parts. */
export function smsSegments(text: string): { encoding: 'gsm7' | 'ucs2'; units: number; segments: number } {
  let septets = 0;
  for (const ch of text) {
    if (GSM7_BASIC.has(ch)) septets += 1;
    else if (GSM7_EXTENDED.has(ch)) septets += 2;
    else {
      // UCS-2 counts UTF-16 code units: a character outside the BMP (an emoji) takes two.
      const units = text.length;
      return { encoding: 'ucs2', units, segments: units <= 70 ? 1 : Math.ceil(units / 67) };
    }
  }
  return { encoding: 'gsm7', units: septets, segments: septets <= 160 ? 1 : Math.ceil(septets / 153) };
}

const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The first `n` characters (code points) of `s`, with "..." when something was cut. */
const cut = (s: string, n: number): string => {
  const chars = [...s];
  return chars.length <= n ? s : `${chars.slice(0, n).join('').trimEnd()}...`;
};

/**
 * The text of `template` in `locale`. Throws on an unknown locale or template, a link that is not an http(s) URL
 * or an invalid expiry, and when even the shortest title and name leave it over MAX_SMS_SEGMENTS (a link that
 * long is a misconfigured BASE_URL).
 */
export function renderSms(template: SmsTemplateName, locale: Locale, vars: SmsVars): string {
  if (!isKnownLocale(locale)) throw new Error(`unknown locale "${String(locale)}"`);
  if (!isSmsTemplateName(template)) throw new Error(`unknown SMS template "${String(template)}"`);
  if (template === SMS_CODE_TEMPLATE) return codeSms(locale, vars);
  if (!/^https?:\/\/\S+$/i.test(vars.url)) throw new Error('url must be an http(s) URL without spaces');
  if (!Number.isFinite(vars.expiresAt)) throw new Error('expiresAt must be epoch milliseconds');
  const date = isoDate(vars.expiresAt);
  const fill = (workspace: string, title: string) =>
    t(locale, SMS_KEYS[template], { workspace, title, url: vars.url, date });
  const fits = (text: string) => smsSegments(text).segments <= MAX_SMS_SEGMENTS;

  const workspace = oneLine(vars.workspaceName);
  const title = oneLine(vars.documentTitle);
  const full = fill(workspace, title);
  if (fits(full)) return full;
  // Cut the title first (down to 10 characters), then the workspace name (down to 10); the longest that fits wins.
  for (let n = Math.min([...title].length - 1, 200); n >= 10; n--) {
    const text = fill(workspace, cut(title, n));
    if (fits(text)) return text;
  }
  const shortTitle = cut(title, 10);
  for (let n = Math.min([...workspace].length - 1, 200); n >= 10; n--) {
    const text = fill(cut(workspace, n), shortTitle);
    if (fits(text)) return text;
  }
  throw new Error(`the ${template} SMS exceeds ${MAX_SMS_SEGMENTS} segments even with a shortened title and name`);
}

/** The code message: the code first (phones show it in the notification), the workspace cut to keep one segment. */
function codeSms(locale: Locale, vars: SmsVars): string {
  if (!vars.code || !/^\d+$/.test(vars.code)) throw new Error('code must be digits');
  const minutes = VERIFICATION_CODE_TTL_MS / 60_000;
  return t(locale, 'sms.verificationCode', {
    code: vars.code,
    workspace: cut(oneLine(vars.workspaceName), 40),
    minutes,
  });
}
