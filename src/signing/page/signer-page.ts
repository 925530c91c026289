// Server-rendered signer pages. Every interpolated value is escaped; the token only appears in same-origin URLs
// (the `data-base` attribute), and the page loads nothing but its own /assets, as its CSP demands.
import type { signerView } from '../signing.service.js';
import { fill, localeOrDefault, strings, type Strings } from '../../i18n/i18n.js';
import { PDF_VIEWER, pageHeaders, type Source } from '../../web/headers.js';
import { esc, jsonForHtml, localeFromAcceptLanguage } from '../../web/html.js';
import { assetUrl, PDFJS_CMAPS_URL, PDFJS_FONTS_URL } from './assets.routes.js';

type View = Awaited<ReturnType<typeof signerView>>;

/**
 * Headers of every signer page: no referrer (the URL holds the token), never cached, nothing but our own assets, and
 * framable only by `frameAncestor` (an embed session's canonical origin, keys/origins.ts) or, without one, by nobody.
 */
export const signerPageHeaders = (frameAncestor?: string): Record<string, string> =>
  pageHeaders({ csp: { ...PDF_VIEWER, frameAncestors: frameAncestor ? [frameAncestor as Source] : ['none'] } });

/**
 * What a page embedded in another site adds (embedded/): a same-origin module loaded before the page's own script,
 * the data block it reads (`#bridge-data`), and when the page's credential ends.
 */
export type Bridge = { script: string; data: unknown; endsInMs?: number };

const bridgeTags = (b: Bridge | undefined) =>
  b
    ? `<script type="application/json" id="bridge-data">${jsonForHtml(b.data)}</script>\n<script type="module" src="${esc(b.script)}"></script>\n`
    : '';

function head(locale: string, title: string, withScript: boolean, bridge?: Bridge): string {
  return `<!doctype html>
<html lang="${esc(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${esc(title)}</title>
<link rel="stylesheet" href="${esc(assetUrl('signer.css'))}">
${bridgeTags(bridge)}${withScript ? `<link rel="modulepreload" href="${esc(assetUrl('pdf.min.mjs'))}">\n<script type="module" src="${esc(assetUrl('signer.js'))}"></script>\n` : ''}</head>`;
}

/** `base`: the same-origin path the page's requests go to (/sign/<token> or an embed session's). */
export function renderSignerPage(v: View, o: { base: string; bridge?: Bridge }): string {
  const locale = localeOrDefault(v.document.locale);
  const s = strings(locale, 'page');
  const base = o.base;
  const title = v.document.title;
  const data = {
    locale,
    strings: s,
    pageCount: v.document.page_count,
    signerName: v.request.name,
    fields: v.fields.map((f) => ({
      id: f.id,
      type: f.type,
      page: f.page,
      x: f.x,
      y: f.y,
      width: f.width,
      height: f.height,
    })),
    endsInMs: o.bridge?.endsInMs ?? null,
    pdfjs: {
      lib: assetUrl('pdf.min.mjs'),
      worker: assetUrl('pdf.worker.min.mjs'),
      view: assetUrl('pdf-view.js'),
      fonts: PDFJS_FONTS_URL,
      cmaps: PDFJS_CMAPS_URL,
    },
  };
  return `${head(locale, `${title} · ${s.title}`, true, o.bridge)}
<body data-base="${esc(base)}" data-state="open">
<a class="skip-link" href="#panel">${esc(s.reviewAndSign)}</a>
<header class="topbar">
  <div class="topbar-inner">
    <div class="doc-meta">
      <p class="sent-by">${esc(fill(s.sentBy, { workspace: v.workspaceName }))}</p>
      <h1 class="doc-title">${esc(title)}</h1>
    </div>
    <button type="button" id="next-field" class="button primary next-field" hidden>${esc(s.nextField)}</button>
  </div>
</header>
<main class="layout" id="main">
  <div id="status" class="status" role="status" aria-live="polite" data-state="ready"></div>
  <section class="viewer" id="viewer" aria-label="${esc(title)}" aria-busy="true">
    <p class="viewer-message" id="viewer-message">${esc(s.loading)}</p>
  </section>
  <aside class="panel" id="panel" aria-labelledby="panel-title" tabindex="-1">
    <h2 id="panel-title">${esc(s.reviewAndSign)}</h2>
    <p class="signer"><span class="signer-name">${esc(v.request.name)}</span> <span class="signer-email">${esc(v.request.email)}</span></p>
    <form id="sign-form" class="sign-form" novalidate>
      <fieldset class="signature-box">
        <legend>${esc(s.signature)}</legend>
        <div class="modes">
          <button type="button" id="mode-typed" class="mode" aria-pressed="true" aria-controls="typed-pane">${esc(s.typeSignature)}</button>
          <button type="button" id="mode-drawn" class="mode" aria-pressed="false" aria-controls="drawn-pane">${esc(s.drawSignature)}</button>
        </div>
        <div id="typed-pane" class="pane">
          <label for="signature-typed">${esc(s.fullName)}</label>
          <input id="signature-typed" name="signature" type="text" autocomplete="name" maxlength="200" spellcheck="false" placeholder="${esc(v.request.name)}">
          <div class="typed-preview script" id="typed-preview" aria-hidden="true"></div>
        </div>
        <div id="drawn-pane" class="pane" hidden>
          <div class="pad-wrap">
            <canvas id="signature-pad" class="pad" role="img" aria-label="${esc(s.drawSignature)}"></canvas>
            <span class="pad-line" aria-hidden="true"></span>
          </div>
          <button type="button" id="pad-clear" class="link-button">${esc(s.clear)}</button>
        </div>
      </fieldset>
      <p class="consent">${esc(s.consent)}</p>
      <p class="form-error" id="sign-error" role="alert"></p>
      <button type="submit" id="sign-button" class="button primary" disabled>${esc(s.sign)}</button>
    </form>
    <div class="decline">
      <button type="button" id="decline-button" class="button secondary" aria-expanded="false" aria-controls="decline-form">${esc(s.decline)}</button>
      <form id="decline-form" class="decline-form" novalidate hidden>
        <label for="decline-reason">${esc(s.declineReason)}</label>
        <textarea id="decline-reason" name="reason" rows="3" maxlength="2000" required></textarea>
        <p class="form-error" id="decline-error" role="alert"></p>
        <div class="row">
          <button type="button" id="decline-cancel" class="button secondary">${esc(s.cancel)}</button>
          <button type="submit" id="decline-confirm" class="button danger">${esc(s.confirmDecline)}</button>
        </div>
      </form>
    </div>
  </aside>
</main>
<script type="application/json" id="signer-data">${jsonForHtml(data)}</script>
</body>
</html>
`;
}

/** States whose page is final; anything unexpected gets the generic "no longer open". */
const CLOSED: Record<string, { icon: string; lines: Array<keyof Strings<'page'>> }> = {
  signed: { icon: '✓', lines: ['signedThanks', 'signedNext'] },
  declined: { icon: '✕', lines: ['declinedDone'] },
  withdrawn: { icon: '–', lines: ['withdrawn'] },
  expired: { icon: '◷', lines: ['expired'] },
  closed: { icon: '–', lines: ['notOpen'] },
  not_found: { icon: '?', lines: ['errorNotFound'] },
  queued: { icon: '–', lines: ['notOpen'] },
  session_expired: { icon: '◷', lines: ['sessionTimedOut'] },
};

/** A final page; an embedded one opens with "session ended" (`ended`) and carries its bridge. */
export function renderClosedPage(locale: string, state: string, o: { ended?: boolean; bridge?: Bridge } = {}): string {
  const l = localeOrDefault(locale);
  const s = strings(l, 'page');
  const c = CLOSED[state] ?? CLOSED.closed!;
  const [first, ...rest] = [...(o.ended ? [s.sessionEnded] : []), ...c.lines.map((k) => s[k])];
  return `${head(l, s.title, false, o.bridge)}
<body data-state="${esc(state)}">
<main class="closed">
  <div id="status" class="status result" role="status" data-state="${esc(state)}">
    <span class="result-icon" aria-hidden="true">${c.icon}</span>
    <h1>${esc(first!)}</h1>
    ${rest.map((line) => `<p>${esc(line)}</p>`).join('\n    ')}
  </div>
</main>
</body>
</html>
`;
}

/** The answer to a browser over the per-address limit: what happened and how long to wait, in its language. */
export function renderTooManyRequestsPage(acceptLanguage: string | undefined, seconds: number): string {
  const l = localeFromAcceptLanguage(acceptLanguage);
  const s = strings(l, 'page');
  return `${head(l, s.title, false)}
<body data-state="rate_limited">
<main class="closed">
  <div id="status" class="status result" role="status" data-state="rate_limited">
    <span class="result-icon" aria-hidden="true">◷</span>
    <h1>${esc(s.tooManyRequests)}</h1>
    <p>${esc(fill(s.tryAgainIn, { seconds }))}</p>
  </div>
</main>
</body>
</html>
`;
}
