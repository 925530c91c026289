// Server-rendered review page of a staged template instance (/review/<token>). Everything a reviewer needs is in the
// HTML itself: the facts, the sender's values, the recipients, a link to the PDF and two plain forms (confirm;
// discard behind a <details> disclosure), so the page works without JavaScript; review.js only draws the PDF with
// pdf.js. Every interpolated value is escaped, the token appears only in same-origin URLs, and the page loads nothing
// but its own /assets, as its CSP demands.
import type { ApiError } from '../../lib/errors.js';
import { fill, formatDateTime, localeOrDefault, strings, type Locale, type Strings } from '../../i18n/i18n.js';
import type { Assets } from '../../web/assets.js';
import { PDF_VIEWER, pageHeaders } from '../../web/headers.js';
import { esc, htmlHead, jsonBlock, modulePreload, moduleScript } from '../../web/html.js';
import { brandedClass, brandLogo, brandStyle, viaService, type PageBrand } from '../../web/brand.js';
import type { reviewView } from './review.service.js';

export type ReviewView = Awaited<ReturnType<typeof reviewView>>;
/** What the page was asked to do when an error page is shown. */
export type ReviewAction = 'view' | 'confirm' | 'discard';

/** Same-origin base of one review link's URLs. */
export const reviewBase = (token: string) => `/review/${encodeURIComponent(token)}`;

/** Like the signer pages: never framed, never cached, no referrer, scripts only from our own origin; forms post here. */
export const REVIEW_PAGE_HEADERS = pageHeaders({
  csp: { ...PDF_VIEWER, formActions: ['self'], frameAncestors: ['none'] },
  noSniff: true,
  noIndex: true,
});

// The signer page's stylesheet and PDF viewer, with the review page's own on top; the workspace's accent colour as a
// style element (the CSP allows inline styles for pdf.js).
function head(assets: Assets, locale: Locale, title: string, withScript: boolean, brand?: PageBrand | null): string {
  const style = brandStyle(brand);
  return htmlHead({
    locale,
    title,
    private: true,
    stylesheets: [assets.url('signer.css'), assets.url('review.css')],
    tags: [
      ...(style ? [style] : []),
      ...(withScript ? [modulePreload(assets.url('pdf.min.mjs')), moduleScript(assets.url('review.js'))] : []),
    ],
  });
}

function topbar(v: ReviewView, s: Strings<'review'>, locale: Locale, download: string | null): string {
  return `<header class="topbar${brandedClass(v.brand)}">
  <div class="topbar-inner">
    ${brandLogo(v.brand)}<div class="doc-meta">
      <p class="sent-by">${esc(fill(s.preparedBy, { workspace: v.workspaceName }))}${viaService(v.brand, locale)}</p>
      <h1 class="doc-title">${esc(v.document.title)}</h1>
    </div>
    ${download ? `<a class="button secondary download" href="${esc(download)}" download="${esc(pdfName(v.document.title))}">${esc(s.download)}</a>` : ''}
  </div>
</header>`;
}

/** A download name from the title: no path separators or control characters, always ending in .pdf. */
const pdfName = (title: string) =>
  `${
    title
      .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, ' ')
      .trim()
      .slice(0, 120) || 'document'
  }.pdf`;

const channelName = (s: Strings<'review'>, channel: string) =>
  channel === 'sms' ? s.channelSms : channel === 'email' ? s.channelEmail : channel;

/** Template, workspace and (while staged) the review deadline. */
function facts(v: ReviewView, s: Strings<'review'>, locale: Locale): string {
  const deadline = v.instance.review_expires_at;
  const rows = [
    [s.template, esc(fill(s.templateVersion, { name: v.templateName, version: v.instance.template_version }))],
    [s.workspace, esc(v.workspaceName)],
  ];
  if (v.state === 'staged' && deadline !== null)
    rows.push([
      s.deadline,
      `<time datetime="${esc(new Date(deadline).toISOString())}">${esc(formatDateTime(locale, deadline))}</time><span class="hint">${esc(s.deadlineHint)}</span>`,
    ]);
  return `<dl class="facts">
${rows.map(([k, val]) => `  <div><dt>${esc(k!)}</dt><dd>${val}</dd></div>`).join('\n')}
</dl>`;
}

/** The sender's values and the recipients, as tables (server-rendered, so they need no script). */
function tables(v: ReviewView, s: Strings<'review'>): string {
  const values = v.values.length
    ? `<table class="data values">
  <thead><tr><th scope="col">${esc(s.field)}</th><th scope="col">${esc(s.value)}</th></tr></thead>
  <tbody>
${v.values.map((f) => `    <tr><th scope="row">${esc(f.label)}</th><td>${esc(f.value)}</td></tr>`).join('\n')}
  </tbody>
</table>`
    : `<p class="muted">${esc(s.noValues)}</p>`;
  const recipients =
    v.instance.kind === 'generate'
      ? ''
      : `<section class="block" aria-labelledby="recipients-title">
<h3 id="recipients-title">${esc(s.recipients)}</h3>
<table class="data recipients">
  <thead><tr><th scope="col">${esc(s.order)}</th><th scope="col">${esc(s.role)}</th><th scope="col">${esc(s.recipient)}</th><th scope="col">${esc(s.channel)}</th></tr></thead>
  <tbody>
${v.recipients
  .map(
    (r) =>
      `    <tr><td class="num">${esc(r.signing_order)}</td><td>${esc(r.slot)}</td><td><span class="name">${esc(r.name)}</span>${[
        r.email,
        r.phone,
      ]
        .filter((c): c is string => Boolean(c))
        .map((c) => `<span class="contact">${esc(c)}</span>`)
        .join('')}</td><td>${esc(channelName(s, r.channel))}</td></tr>`,
  )
  .join('\n')}
  </tbody>
</table>
</section>`;
  return `<section class="block" aria-labelledby="values-title">
<h3 id="values-title">${esc(s.values)}</h3>
${values}
</section>
${recipients}`;
}

/** The page of a link: the review itself while staged, else the outcome (confirmed, discarded, expired). */
export function renderReviewPage(assets: Assets, v: ReviewView, token: string): string {
  return v.state === 'staged' ? renderStaged(assets, v, token) : renderOutcome(assets, v);
}

function renderStaged(assets: Assets, v: ReviewView, token: string): string {
  const locale = localeOrDefault(v.document.locale);
  const s = strings(locale, 'review');
  const p = strings(locale, 'page');
  const base = reviewBase(token);
  const pdf = `${base}/document.pdf`;
  const generate = v.instance.kind === 'generate';
  const data = {
    strings: { loading: p.loading, pageOf: p.pageOf, errorDocumentLoad: p.errorDocumentLoad },
    pdf,
    pdfjs: {
      lib: assets.url('pdf.min.mjs'),
      worker: assets.url('pdf.worker.min.mjs'),
      view: assets.url('pdf-view.js'),
      fonts: assets.url('pdfjs/standard_fonts/'),
      cmaps: assets.url('pdfjs/cmaps/'),
    },
  };
  return `${head(assets, locale, `${v.document.title} · ${s.title}`, true, v.brand)}
<body class="review" data-state="staged">
<a class="skip-link" href="#panel">${esc(s.heading)}</a>
${topbar(v, s, locale, pdf)}
<main class="layout" id="main">
  <section class="viewer" id="viewer" aria-label="${esc(v.document.title)}" aria-busy="true">
    <p class="viewer-message" id="viewer-message" hidden>${esc(p.loading)}</p>
    <noscript><p class="viewer-message">${esc(s.noScript)} <a href="${esc(pdf)}">${esc(s.download)}</a></p></noscript>
  </section>
  <aside class="panel review-panel" id="panel" aria-labelledby="panel-title" tabindex="-1">
    <h2 id="panel-title">${esc(s.heading)}</h2>
    <p class="intro">${esc(generate ? s.introGenerate : s.intro)}</p>
    ${facts(v, s, locale)}
    ${tables(v, s)}
    <form class="confirm-form" method="post" action="${esc(base)}/confirm">
      <p class="note">${esc(generate ? s.confirmNoteGenerate : s.confirmNote)}</p>
      <button type="submit" id="confirm-button" class="button primary">${esc(generate ? s.confirmGenerate : s.confirm)}</button>
    </form>
    <details class="discard" id="discard">
      <summary class="button secondary">${esc(s.discard)}</summary>
      <form class="discard-form" method="post" action="${esc(base)}/discard">
        <p class="warning">${esc(s.discardWarning)}</p>
        <button type="submit" id="discard-button" class="button danger">${esc(s.discardConfirm)}</button>
      </form>
    </details>
  </aside>
</main>
${jsonBlock('review-data', data)}
</body>
</html>
`;
}

const OUTCOMES: Record<string, { icon: string; lines: (s: Strings<'review'>, v: ReviewView) => string[] }> = {
  confirmed: {
    icon: '✓',
    lines: (s, v) => [v.instance.kind === 'generate' ? s.confirmedGenerate : s.confirmed],
  },
  discarded: { icon: '✕', lines: (s) => [s.discarded] },
  expired: { icon: '◷', lines: (s) => [s.expired, s.expiredDetail] },
};

function renderOutcome(assets: Assets, v: ReviewView): string {
  const locale = localeOrDefault(v.document.locale);
  const s = strings(locale, 'review');
  const o = OUTCOMES[v.state] ?? OUTCOMES.discarded!;
  const [first, ...rest] = o.lines(s, v);
  return `${head(assets, locale, `${v.document.title} · ${s.title}`, false, v.brand)}
<body class="review" data-state="${esc(v.state)}">
${topbar(v, s, locale, null)}
<main class="closed" id="main">
  <div id="status" class="status result" role="status" data-state="${esc(v.state)}">
    <span class="result-icon" aria-hidden="true">${o.icon}</span>
    <h2>${esc(first!)}</h2>
    ${rest.map((line) => `<p>${esc(line)}</p>`).join('\n    ')}
  </div>
  <section class="summary" aria-label="${esc(v.document.title)}">
    ${facts(v, s, locale)}
    ${tables(v, s)}
  </section>
</main>
</body>
</html>
`;
}

/** Headline of a refused action, by catalogue error. */
const ERROR_LINES: Partial<Record<ApiError['name_'], (s: Strings<'review'>) => string[]>> = {
  not_found: (s) => [s.notFound],
  already_confirmed: (s) => [s.alreadyConfirmed],
  discarded: (s) => [s.alreadyDiscarded],
  not_staged: (s) => [s.notStaged],
  review_expired: (s) => [s.expired, s.expiredDetail],
  render_failed: (s) => [s.renderFailed],
};

/**
 * A readable page for a refused or failed action: what happened in the reviewer's language and, unless the link is
 * unknown, the way back to the review. `err` is null for an unexpected failure (nothing about it is shown).
 */
export function renderReviewError(
  assets: Assets,
  locale: string,
  token: string,
  action: ReviewAction,
  err: ApiError | null,
): string {
  const l = localeOrDefault(locale);
  const s = strings(l, 'review');
  const known = err ? ERROR_LINES[err.name_] : undefined;
  let lines: string[];
  // The catalogue's own words, in English, for a refusal the page has no sentence of its own for (e.g. an expiry).
  let detail: string | null = null;
  if (known) lines = known(s);
  else if (err && err.status < 500) {
    lines = [
      action === 'discard' ? s.cannotDiscard : action === 'confirm' ? s.cannotConfirm : strings(l, 'page').errorGeneric,
    ];
    detail = err.message;
  } else lines = [strings(l, 'page').errorGeneric];
  const [first, ...rest] = lines;
  const code = err?.code ?? 'internal_error';
  const back =
    err?.name_ === 'not_found' ? '' : `<p class="back"><a href="${esc(reviewBase(token))}">${esc(s.back)}</a></p>`;
  return `${head(assets, l, s.title, false)}
<body class="review" data-state="error">
<main class="closed" id="main">
  <div id="status" class="status result" role="alert" data-state="error" data-code="${esc(code)}">
    <span class="result-icon" aria-hidden="true">!</span>
    <h1>${esc(first!)}</h1>
    ${rest.map((line) => `<p>${esc(line)}</p>`).join('\n    ')}
    ${detail ? `<p class="error-detail" lang="en">${esc(detail)}</p>` : ''}
    ${back}
  </div>
</main>
</body>
</html>
`;
}
