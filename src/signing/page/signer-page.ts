// Server-rendered signer pages. Every interpolated value is escaped; the token only appears in same-origin URLs
// (the `data-base` attribute), and the page loads nothing but its own /assets, as its CSP demands.
import type { signerView } from '../signing.service.js';
import { dirOf, fill, localeOrDefault, strings, type Locale, type Strings } from '../../i18n/i18n.js';
import type { Assets } from '../../web/assets.js';
import { PDF_VIEWER, pageHeaders, type Source } from '../../web/headers.js';
import { esc, htmlHead, jsonBlock, modulePreload, moduleScript, resultPage } from '../../web/html.js';
import { brandedClass, brandLogo, brandStyle, isBranded, viaService, type PageBrand } from '../../web/brand.js';
import { renderFieldInputs } from './field-inputs.js';

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

/** `brand`: the workspace's accent colour as a style element (the page's CSP allows inline styles for pdf.js). */
function head(
  assets: Assets,
  locale: string,
  title: string,
  withScript: boolean,
  bridge?: Bridge,
  brand?: PageBrand | null,
): string {
  const style = brandStyle(brand);
  return htmlHead({
    locale,
    title,
    private: true,
    stylesheets: [assets.url('signer.css')],
    tags: [
      ...(style ? [style] : []),
      ...(bridge ? [jsonBlock('bridge-data', bridge.data), moduleScript(bridge.script)] : []),
      ...(withScript ? [modulePreload(assets.url('pdf.min.mjs')), moduleScript(assets.url('signer.js'))] : []),
    ],
  });
}

/** A provider's name inside a sentence, isolated in a right-to-left one so a Latin name keeps its own order. */
const isolate = (locale: Locale, name: string): string => (dirOf(locale) === 'rtl' ? `\u2068${name}\u2069` : name);

/** What a qualified signature (issue 23) changes on the page: a box saying where the signer goes next, the button. */
function qesParts(locale: Locale, provider: string) {
  const q = strings(locale, 'qes');
  const vars = { provider: isolate(locale, provider) };
  return {
    box: `<div class="qes-intro" id="qes-intro">
        <h3 class="qes-intro-title">${esc(q.introTitle)}</h3>
        <p id="qes-intro-body">${esc(fill(q.introBody, vars))}</p>
      </div>
      `,
    button: fill(q.continueTo, vars),
    consent: q.consent,
    // The status line the form shows while the provider is being opened.
    wait: `<p class="form-status" id="sign-wait" role="status" aria-live="polite"></p>
      `,
    data: { qes: true, qesOpening: fill(q.opening, vars) },
  };
}

/**
 * `base`: the same-origin path the page's requests go to (/sign/<token> or an embed session's). `qes`: the request
 * asks for a qualified signature made at `provider`; the form then posts to `base/qes/start` and follows its redirect.
 */
export function renderSignerPage(
  assets: Assets,
  v: View,
  o: { base: string; bridge?: Bridge; qes?: { provider: string } },
): string {
  const locale = localeOrDefault(v.document.locale);
  const s = strings(locale, 'page');
  const base = o.base;
  const title = v.document.title;
  const qes = o.qes ? qesParts(locale, o.qes.provider) : undefined;
  const data = {
    ...qes?.data,
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
      ...(f.rules ? { rules: f.rules } : {}),
    })),
    fieldsModule: assets.url('signer-fields.js'),
    endsInMs: o.bridge?.endsInMs ?? null,
    pdfjs: {
      lib: assets.url('pdf.min.mjs'),
      worker: assets.url('pdf.worker.min.mjs'),
      view: assets.url('pdf-view.js'),
      fonts: assets.url('pdfjs/standard_fonts/'),
      cmaps: assets.url('pdfjs/cmaps/'),
    },
  };
  return `${head(assets, locale, `${title} · ${s.title}`, true, o.bridge, v.brand)}
<body data-base="${esc(base)}" data-state="open">
<a class="skip-link" href="#panel">${esc(s.reviewAndSign)}</a>
<header class="topbar${brandedClass(v.brand)}">
  <div class="topbar-inner">
    ${brandLogo(v.brand)}<div class="doc-meta">
      <p class="sent-by">${esc(fill(s.sentBy, { workspace: v.workspaceName }))}${viaService(v.brand, locale)}</p>
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
      ${renderFieldInputs(v.fields, s)}
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
            <canvas id="signature-pad" class="pad" role="img" aria-label="${esc(s.drawSignature)}" tabindex="0" aria-describedby="pad-hint"></canvas>
            <span class="pad-line" aria-hidden="true"></span>
          </div>
          <p id="pad-hint" class="pad-hint">${esc(s.padKeyboardHint)}</p>
          <button type="button" id="pad-clear" class="link-button">${esc(s.clear)}</button>
        </div>
      </fieldset>
      ${qes?.box ?? ''}<p class="consent">${esc(qes?.consent ?? s.consent)}</p>
      <p class="form-error" id="sign-error" role="alert"></p>
      ${qes?.wait ?? ''}<button type="submit" id="sign-button" class="button primary"${qes ? ' aria-describedby="qes-intro-body"' : ''} disabled>${esc(qes?.button ?? s.sign)}</button>
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
${jsonBlock('signer-data', data)}
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

/**
 * A final page; an embedded one opens with "session ended" (`ended`) and carries its bridge. `download` (a signer
 * whose document completed): the sealed PDF's same-origin URL and file name, offered as a plain link.
 */
export function renderClosedPage(
  assets: Assets,
  locale: string,
  state: string,
  o: {
    ended?: boolean;
    bridge?: Bridge;
    download?: { href: string; fileName: string };
    /** The workspace whose link this was: its logo and colour, and who sent it "via Signet". */
    brand?: PageBrand | null;
  } = {},
): string {
  const l = localeOrDefault(locale);
  const s = strings(l, 'page');
  const c = CLOSED[state] ?? CLOSED.closed!;
  const keys = o.download ? (['signedThanks', 'completedDone'] as const) : c.lines;
  const lines = [...(o.ended ? [s.sessionEnded] : []), ...keys.map((k) => s[k])];
  const links = o.download ? [{ href: o.download.href, label: s.downloadSigned, download: o.download.fileName }] : [];
  return resultPage(
    head(assets, l, s.title, false, o.bridge, o.brand),
    state,
    c.icon,
    lines,
    links,
    brandMark(l, o.brand),
  );
}

/** A result box's brand: the logo and "Sent by <workspace> · via Signet"; nothing for an unbranded workspace. */
export function brandMark(locale: Locale, brand: PageBrand | null | undefined): string {
  if (!isBranded(brand)) return '';
  const s = strings(locale, 'page');
  return `${brandLogo(brand)}<p class="sent-by">${esc(fill(s.sentBy, { workspace: brand.name }))}${viaService(brand, locale)}</p>`;
}
