// The /verify page: a form to upload a PDF (works without JavaScript: a plain multipart form) and the report in the
// visitor's language. Nothing on it is stored or remembered.
import { fill, formatDateTime, strings, t, type Locale } from '../i18n/i18n.js';
import { brandLogo, brandStyle, isBranded, viaService, type PageBrand } from '../web/brand.js';
import { esc, htmlHead } from '../web/html.js';
import type { VerificationOut } from './verification.schemas.js';

export type VerifyPageInput = {
  locale: Locale;
  stylesheet: string;
  /** The report, or the form alone (with an error line when the upload was refused). */
  report?: VerificationOut;
  /** The workspace that sent the Signet document the report names: its logo, colour and name. */
  brand?: PageBrand | null;
  error?: string;
};

export function renderVerifyPage(o: VerifyPageInput): string {
  const s = strings(o.locale, 'verify');
  // The accent's style element is allowed by its hash in this page's CSP (verify-page.routes.ts).
  const style = o.report ? brandStyle(o.brand) : '';
  const head = htmlHead({
    locale: o.locale,
    title: s['page.title'],
    private: true,
    stylesheets: [o.stylesheet],
    tags: style ? [style] : [],
  });
  const form = `<form class="upload" method="post" action="/verify" enctype="multipart/form-data">
    <label for="file">${esc(s['page.fileLabel'])}</label>
    <input id="file" name="file" type="file" accept="application/pdf,.pdf" required>
    <button type="submit">${esc(s['page.submit'])}</button>
  </form>`;
  const body = o.report
    ? `${sender(o.locale, o.brand)}${report(o.locale, o.report)}\n<p><a href="/verify">${esc(s['page.another'])}</a></p>`
    : `<p>${esc(s['page.intro'])}</p>\n${o.error ? `<p class="error" role="alert">${esc(o.error)}</p>\n` : ''}${form}`;
  return `${head}
<body data-state="${o.report ? o.report.verdict : o.error ? 'error' : 'form'}">
<main class="verify">
  <h1>${esc(s['page.title'])}</h1>
  ${body}
</main>
</body>
</html>
`;
}

/** Who sent the document, on a branded workspace: its logo and "Sent by <name> · via Signet". */
function sender(locale: Locale, brand: PageBrand | null | undefined): string {
  if (!isBranded(brand)) return '';
  return `<div class="sender">${brandLogo(brand, 'sender-logo')}<p>${esc(
    t(locale, 'page.sentBy', { workspace: brand.name }),
  )}${viaService(brand, locale)}</p></div>
  `;
}

function report(locale: Locale, r: VerificationOut): string {
  const s = strings(locale, 'verify');
  const when = (iso: string | null) => (iso ? formatDateTime(locale, Date.parse(iso)) : '—');
  const yesNo = (b: boolean) => (b ? s['page.yes'] : s['page.no']);
  const doc = r.document?.purged_at
    ? `<p class="purged">${esc(fill(s['page.purged'], { time: when(r.document.completed_at), purged: when(r.document.purged_at) }))}</p>`
    : r.document
      ? `<p>${esc(fill(s['page.document'], { title: r.document.title, time: when(r.document.completed_at) }))} ${esc(
          r.document.audit_chain_valid ? s['page.auditValid'] : s['page.auditBroken'],
        )}</p>`
      : `<p>${esc(s['page.notOurs'])}</p>`;
  // A document timestamp is no signature in eIDAS's sense: no level row for it.
  const level = (l: VerificationOut['signatures'][number]['level']) =>
    l
      ? `<dt>${esc(s['page.signatureLevel'])}</dt><dd class="level-${l}">${esc(
          l === 'qes' ? s['page.levelQes'] : s['page.levelAdvanced'],
        )}</dd>`
      : '';
  const problems = (list: string[]) =>
    list.length ? `<ul class="problems">${list.map((p) => `<li>${esc(p)}</li>`).join('')}</ul>` : '';
  const signatures = r.signatures
    .map(
      (x) => `<section class="signature" data-intact="${x.intact}" data-trusted="${x.trusted}" data-level="${esc(
        x.level ?? 'none',
      )}">
    <h2>${esc(x.kind === 'signature' ? s['page.signature'] : s['page.documentTimestamp'])}: ${esc(x.field)}</h2>
    <dl>
      <dt>${esc(s['page.signer'])}</dt><dd>${esc(x.signer?.subject ?? '—')}</dd>
      <dt>${esc(s['page.issuer'])}</dt><dd>${esc(x.signer?.issuer ?? '—')}</dd>
      <dt>${esc(s['page.time'])}</dt><dd>${esc(
        x.signed_at
          ? fill(x.time_proven ? s['page.timeProven'] : s['page.timeClaimed'], { time: when(x.signed_at) })
          : '—',
      )}</dd>
      <dt>${esc(s['page.intact'])}</dt><dd>${esc(yesNo(x.intact))}</dd>
      <dt>${esc(s['page.trusted'])}</dt><dd>${esc(yesNo(x.trusted))}</dd>
      ${level(x.level)}
    </dl>
    ${problems(x.problems)}
  </section>`,
    )
    .join('\n  ');
  return `<div id="verdict" class="verdict ${esc(r.verdict)}" role="status" data-verdict="${esc(r.verdict)}">
    <p><strong>${esc(s[`page.verdict.${r.verdict}`])}</strong></p>
  </div>
  <p>${esc(r.pades_level ? fill(s['page.level'], { level: r.pades_level }) : s['page.levelNone'])}</p>
  <p class="help">${esc(s['page.levelHelp'])}</p>
  <p>${esc(fill(s['page.modified'], { answer: yesNo(r.modified_after_signing) }))}</p>
  ${doc}
  ${problems(r.problems)}
  ${signatures}
  <p class="hash">${esc(fill(s['page.sha256'], { hash: r.sha256 }))}</p>`;
}
