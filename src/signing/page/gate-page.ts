// The verification gate (issue 22): what a signer whose request asks for a code sees instead of the document. Plain
// forms that post to the page's own same-origin URLs and come back with a 303, so it works without JavaScript; it
// shows no document content beyond its title and sender. Every interpolated value is escaped.
import { fill, localeOrDefault, strings } from '../../i18n/i18n.js';
import { VERIFICATION_CODE_DIGITS, VERIFICATION_CODE_TTL_MS } from '../../limits.js';
import type { Assets } from '../../web/assets.js';
import { esc, htmlHead, jsonBlock, moduleScript } from '../../web/html.js';
import { brandedClass, brandLogo, brandStyle, viaService, type PageBrand } from '../../web/brand.js';
import type { Bridge } from './signer-page.js';

/** What the page says after a form came back (`?v=` of the 303): one of these, anything else is ignored. */
export const GATE_NOTICES = ['sent', 'wrong', 'expired', 'locked', 'no_code', 'limit', 'limit_total'] as const;
export type GateNotice = (typeof GATE_NOTICES)[number];
export const gateNoticeOf = (v: unknown): GateNotice | null =>
  typeof v === 'string' && (GATE_NOTICES as readonly string[]).includes(v) ? (v as GateNotice) : null;

/** The few document facts the gate shows (never its content), and the sending workspace's brand. */
export const gateDoc = (v: {
  document: { locale: string; title: string };
  workspaceName: string;
  brand: PageBrand | null;
}) => ({
  locale: v.document.locale,
  title: v.document.title,
  workspaceName: v.workspaceName,
  brand: v.brand,
});

export type GateView = {
  method: 'email_code' | 'sms_code';
  destination: string;
  standing: 'none' | 'active' | 'expired' | 'locked';
  triesLeft: number;
};

export function renderGatePage(
  assets: Assets,
  doc: { locale: string; title: string; workspaceName: string; brand?: PageBrand | null },
  g: GateView,
  o: { base: string; notice: GateNotice | null; waitMinutes?: number; bridge?: Bridge },
): string {
  const locale = localeOrDefault(doc.locale);
  const s = strings(locale, 'page');
  const vars = { workspace: doc.workspaceName, destination: g.destination };
  const minutes = VERIFICATION_CODE_TTL_MS / 60_000;
  // The newest code's standing decides what the page offers; a notice from the last form adds why.
  const problem: Partial<Record<GateNotice, string>> = {
    wrong: fill(s.gateWrong, { tries: g.triesLeft }),
    expired: s.gateExpired,
    locked: s.gateLocked,
    no_code: s.gateNoCode,
    limit: fill(s.gateLimit, { minutes: o.waitMinutes ?? 60 }),
    limit_total: fill(s.gateLimitTotal, vars),
  };
  let error = o.notice ? (problem[o.notice] ?? '') : '';
  if (!error && g.standing === 'locked') error = s.gateLocked;
  if (!error && g.standing === 'expired') error = s.gateExpired;
  const sent = o.notice === 'sent' && g.standing === 'active' ? fill(s.gateSent, { ...vars, minutes }) : '';
  const action = (what: 'send' | 'check') => esc(`${o.base}/verification/${what}`);
  const codeForm =
    g.standing === 'active'
      ? `<form class="gate-form" method="post" action="${action('check')}">
      <label for="gate-code">${esc(s.gateCodeLabel)}</label>
      <input id="gate-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{${VERIFICATION_CODE_DIGITS}}" maxlength="${VERIFICATION_CODE_DIGITS}" required autofocus${error ? ' aria-invalid="true" aria-describedby="gate-error"' : ''}>
      <button type="submit" class="button primary">${esc(s.gateVerify)}</button>
    </form>`
      : '';
  const style = brandStyle(doc.brand);
  const tags = [
    ...(style ? [style] : []),
    ...(o.bridge ? [jsonBlock('bridge-data', o.bridge.data), moduleScript(o.bridge.script)] : []),
  ];
  // The sender is named on the page's own line below; the logo above the icon.
  const mark = brandLogo(doc.brand);
  return `${htmlHead({ locale, title: `${doc.title} · ${s.gateTitle}`, private: true, stylesheets: [assets.url('signer.css')], tags })}
<body data-state="verification" data-base="${esc(o.base)}">
<main class="closed">
  <div class="result gate${brandedClass(doc.brand)}" data-state="verification">
    ${mark}<span class="result-icon" aria-hidden="true">${g.method === 'sms_code' ? '✆' : '✉'}</span>
    <h1>${esc(s.gateTitle)}</h1>
    <p class="gate-doc">${esc(fill(s.sentBy, vars))}${viaService(doc.brand, locale)}: <strong>${esc(doc.title)}</strong></p>
    <p>${esc(fill(g.method === 'sms_code' ? s.gateIntroSms : s.gateIntroEmail, vars))}</p>
    <p class="gate-sent" role="status">${esc(sent)}</p>
    <p class="form-error" id="gate-error" role="alert">${esc(error)}</p>
    ${codeForm}
    <form class="gate-form" method="post" action="${action('send')}">
      <button type="submit" class="button ${g.standing === 'active' ? 'secondary' : 'primary'}">${esc(g.standing === 'none' ? s.gateSend : s.gateSendAgain)}</button>
    </form>
  </div>
</main>
</body>
</html>
`;
}
