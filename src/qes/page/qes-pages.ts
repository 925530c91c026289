// The page a signer lands on when a qualified signature's ceremony ends (issue 23): back from the provider, or
// stopped before reaching it. One heading and plain sentences per outcome, in the document's language; every value
// escaped. Nothing on it needs JavaScript: the way back to the document is a plain link. Its head is the signer pages'
// closed-page head (signer.css, private), written here with web/html.ts because only signing/ and embedded/ may
// import the signer page module.
import { dirOf, fill, localeOrDefault, strings, type Locale, type Strings } from '../../i18n/i18n.js';
import type { Assets } from '../../web/assets.js';
import { htmlHead, resultPage, type ResultLink } from '../../web/html.js';

/** How a ceremony ended, as the signer is told. */
export type QesOutcome =
  | 'cancelled'
  | 'refused'
  | 'provider_down'
  | 'cert_expired'
  | 'cert_revoked'
  | 'cert_not_qualified'
  | 'cert_untrusted'
  | 'bad_signature'
  | 'busy'
  | 'ceremony_expired'
  | 'no_credential'
  | 'revocation_unknown'
  | 'signed';

type Key = keyof Strings<'qes'>;

/** Each outcome's icon and its heading and sentence in the `qes` section; written once, checked by the compiler. */
export const QES_OUTCOMES: Readonly<Record<QesOutcome, { icon: string; title: Key; body?: Key }>> = {
  cancelled: { icon: '–', title: 'cancelledTitle', body: 'cancelledBody' },
  refused: { icon: '✕', title: 'refusedTitle', body: 'refusedBody' },
  provider_down: { icon: '!', title: 'providerDownTitle', body: 'providerDownBody' },
  cert_expired: { icon: '!', title: 'certExpiredTitle', body: 'certExpiredBody' },
  cert_revoked: { icon: '!', title: 'certRevokedTitle', body: 'certRevokedBody' },
  cert_not_qualified: { icon: '!', title: 'certNotQualifiedTitle', body: 'certNotQualifiedBody' },
  cert_untrusted: { icon: '!', title: 'certUntrustedTitle', body: 'certUntrustedBody' },
  bad_signature: { icon: '✕', title: 'badSignatureTitle', body: 'badSignatureBody' },
  busy: { icon: '◷', title: 'busyTitle', body: 'busyBody' },
  ceremony_expired: { icon: '◷', title: 'ceremonyExpiredTitle', body: 'ceremonyExpiredBody' },
  no_credential: { icon: '!', title: 'noCredentialTitle', body: 'noCredentialBody' },
  revocation_unknown: { icon: '◷', title: 'revocationUnknownTitle', body: 'revocationUnknownBody' },
  signed: { icon: '✓', title: 'signedTitle' },
};

/** A provider's name inside a sentence, isolated in a right-to-left one so a Latin name keeps its own order. */
const isolate = (locale: Locale, name: string): string => (dirOf(locale) === 'rtl' ? `\u2068${name}\u2069` : name);

/**
 * The page for `outcome`, in `locale` (an unknown one falls back to the default). `provider`: the provider's name, as
 * the sentences name it (without it they say "your trust service provider"). `retryHref`: the signer page's
 * same-origin address, offered as "Back to the document" on every outcome but `signed`. The body's `data-state` is
 * the outcome, for scripts and tests (and `signed` gets the signed page's green mark).
 */
export function renderQesResultPage(
  assets: Assets,
  locale: string,
  outcome: QesOutcome,
  o: { retryHref?: string; provider?: string } = {},
): string {
  const l = localeOrDefault(locale);
  const q = strings(l, 'qes');
  const page = strings(l, 'page');
  const c = QES_OUTCOMES[outcome];
  const vars = { provider: o.provider ? isolate(l, o.provider) : q.yourProvider };
  // A signature made reads as the signed page does: thanks, then what happens next.
  const lines = [q[c.title], c.body ? fill(q[c.body], vars) : page.signedNext];
  const links: ResultLink[] = o.retryHref && outcome !== 'signed' ? [{ href: o.retryHref, label: q.retry }] : [];
  const head = htmlHead({
    locale: l,
    title: `${q[c.title]} · ${q.introTitle}`,
    private: true,
    stylesheets: [assets.url('signer.css')],
  });
  return resultPage(head, outcome, c.icon, lines, links);
}
