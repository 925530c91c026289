// The signer's copy page (/copy/<token>): the signed PDF and the audit certificate as plain download links, in the
// visitor's language. No script at all, so it works without JavaScript and its CSP allows none; every interpolated
// value is escaped, and the token appears only in same-origin URLs.
import type { CopyView } from '../copy.service.js';
import { downloadName } from '../presenters.js';
import { fill, formatDateTime, strings, type Locale } from '../../i18n/i18n.js';
import type { Assets } from '../../web/assets.js';
import { pageHeaders } from '../../web/headers.js';
import { esc, htmlHead, resultPage } from '../../web/html.js';
import { brandedClass, brandLogo, brandStyle, brandStyleSource, viaService, type PageBrand } from '../../web/brand.js';

/**
 * No script, no form, no frame: the page is links and text (and the shell's empty `data:` icon); a branded
 * workspace's accent is the one style element allowed, by its hash.
 */
export const copyPageHeaders = (brand?: PageBrand | null) => {
  const style = brandStyleSource(brand);
  return pageHeaders({
    csp: {
      scripts: ['none'],
      ...(style ? { styles: ['self', style] } : {}),
      images: ['self', 'data:'],
      objects: ['none'],
      baseUri: ['none'],
      formActions: ['none'],
      frameAncestors: ['none'],
    },
    noSniff: true,
    noIndex: true,
  });
};
export const COPY_PAGE_HEADERS = copyPageHeaders();

const head = (assets: Assets, locale: Locale, title: string, brand?: PageBrand | null) => {
  const style = brandStyle(brand);
  return htmlHead({
    locale,
    title,
    private: true,
    stylesheets: [assets.url('signer.css')],
    tags: style ? [style] : [],
  });
};

/** `base`: the page's own path, /copy/<token>. */
export function renderCopyPage(assets: Assets, locale: Locale, v: CopyView, base: string): string {
  const s = strings(locale, 'copy');
  const d = v.document;
  const item = (href: string, label: string, hint: string, download: string, extra = '') => `<li>
      <a class="button primary" href="${esc(href)}" download="${esc(download)}">${esc(label)}</a>
      <p class="hint">${esc(hint)}</p>${extra}
    </li>`;
  const hash = d.signed_sha256 ? `\n      <p class="hash">SHA-256: <code>${esc(d.signed_sha256)}</code></p>` : '';
  return `${head(assets, locale, `${d.title} · ${s.title}`, v.brand)}
<body data-state="open">
<main class="closed">
  <div class="result copy${brandedClass(v.brand)}" data-state="open">
    ${brandLogo(v.brand)}<p class="sent-by">${esc(fill(s.sentBy, { workspace: v.workspaceName }))}${viaService(v.brand, locale)}</p>
    <h1>${esc(d.title)}</h1>
    <p>${esc(fill(s.completedAt, { date: formatDateTime(locale, d.completed_at ?? v.copy.created_at) }))}</p>
    <h2>${esc(s.downloads)}</h2>
    <ul class="downloads">
      ${item(`${base}/document.pdf`, s.signedPdf, s.signedPdfHint, downloadName(d, 'signed'), hash)}
      ${item(`${base}/audit-trail.pdf`, s.auditPdf, s.auditPdfHint, downloadName(d, 'audit'))}
    </ul>
    <p class="valid-until">${esc(fill(s.validUntil, { date: formatDateTime(locale, v.copy.expires_at) }))}</p>
  </div>
</main>
</body>
</html>
`;
}

/** An unknown link (`not_found`), or an expired one, which names whom to ask. */
export function renderCopyGone(assets: Assets, locale: Locale, state: 'not_found' | 'expired', workspace = ''): string {
  const s = strings(locale, 'copy');
  const lines = state === 'expired' ? [s.expired, fill(s.expiredNext, { workspace })] : [s.notFound];
  return resultPage(head(assets, locale, s.title), state, state === 'expired' ? '◷' : '?', lines);
}
