// Pure e-mail builders: (template, locale, vars) → subject, plain text and HTML. Every interpolated value is
// HTML-escaped in the HTML part; the signer or copy link appears verbatim in both parts. A right-to-left language
// (Arabic) sets dir="rtl" on the HTML and starts each line of our text part with a right-to-left mark, so a line that
// opens with a Latin name still reads right to left; links and the sender's quoted message are left as they are.
// A workspace's brand (issue 27) changes the HTML only: its logo as an inline image (`cid:`, attached by smtp.ts) and
// its accent colour, used only when it is exactly `#rrggbb`, on the button and links; the text part stays as it was.
import { dirOf, formatDateTime, t, type Locale, type MessageKey } from '../i18n/i18n.js';
import { SIGNER_COPY_VALIDITY_MS, VERIFICATION_CODE_TTL_MS } from '../limits.js';
import { accentOf } from '../web/brand.js';

export type InvitationVars = {
  workspaceName: string;
  signerName: string;
  documentTitle: string;
  /** BASE_URL of the service; the link is `{baseUrl}/sign/{token}`. */
  baseUrl: string;
  token: string;
  expiresAt: number;
  /** Optional note from the sender, shown as written (line breaks kept). */
  message?: string | null;
};

export type CompletedVars = {
  workspaceName: string;
  signerName: string;
  documentTitle: string;
  /** The signer's copy link, `{baseUrl}/copy/{token}`; absent only on a schema without migration 010. */
  copy?: { baseUrl: string; token: string; expiresAt: number };
};
/** Sent to the other signers of a document one signer declined; the reason stays with the sender. */
export type DeclinedVars = { workspaceName: string; signerName: string; documentTitle: string; declinedByName: string };
export type ExpiredVars = { workspaceName: string; signerName: string; documentTitle: string; expiredAt: number };
export type WithdrawnVars = { workspaceName: string; signerName: string; documentTitle: string };

/** A person invited to a workspace's dashboard; `url` is their one-time set-password link. */
export type MemberInvitationVars = { workspaceName: string; inviterEmail: string; url: string; expiresAt: number };

/** A signer's verification code (issue 22); the code exists only in this message and as a hash. */
export type VerificationCodeVars = {
  workspaceName: string;
  signerName: string;
  documentTitle: string;
  code: string;
  expiresAt: number;
};

export type TemplateVars = {
  invitation: InvitationVars;
  reminder: InvitationVars;
  expiry_warning: InvitationVars;
  completed: CompletedVars;
  declined: DeclinedVars;
  expired: ExpiredVars;
  withdrawn: WithdrawnVars;
  member_invitation: MemberInvitationVars;
  verification_code: VerificationCodeVars;
};
export type TemplateName = keyof TemplateVars;
export const TEMPLATE_NAMES = [
  'invitation',
  'reminder',
  'expiry_warning',
  'completed',
  'declined',
  'expired',
  'withdrawn',
  'member_invitation',
  'verification_code',
] as const;

export type RenderedMail = { subject: string; text: string; html: string };

/** The sending workspace's face in a mail: its name (the logo's alt text), accent colour and the logo's Content-ID. */
export type MailBrand = { name: string; color: string | null; logoCid: string | null };

/** Signet's own button colour, when the workspace has none. */
const DEFAULT_ACCENT = '#1f4fd1';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

// Names and titles are one-line values; a stray line break must not reshape a subject or a paragraph.
export const oneLine = (s: string): string =>
  s
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();

/** A link carrying a token. Only http(s) bases are accepted, so the HTML href can never carry another scheme. */
function tokenLink(baseUrl: string, path: 'sign' | 'copy', token: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s]+$/i.test(base)) throw new Error(`baseUrl must be an http(s) URL, got "${baseUrl}"`);
  if (!token) throw new Error('token is empty');
  return `${base}/${path}/${encodeURIComponent(token)}`;
}

/** The signer's link. */
export const signerLink = (baseUrl: string, token: string): string => tokenLink(baseUrl, 'sign', token);
/** The signer's copy: the sealed PDF and the audit certificate. */
export const copyLink = (baseUrl: string, token: string): string => tokenLink(baseUrl, 'copy', token);

type Layout = {
  locale: Locale;
  subject: string;
  signerName: string;
  paragraphs: string[];
  message?: { label: string; body: string };
  /** `intro`: the text part's line before the URL (default: open to review and sign). */
  action?: { label: string; url: string; intro?: string; after?: string[] };
  footer: string[];
};

/** U+200F RIGHT-TO-LEFT MARK: sets a plain-text line's direction without showing anything. */
const RLM = '\u200f';

function render(l: Layout, brand?: MailBrand | null): RenderedMail {
  const name = oneLine(l.signerName);
  const greeting = name ? t(l.locale, 'mail.greeting', { name }) : t(l.locale, 'mail.greetingNoName');
  const body = l.message?.body.replace(/\r\n?/g, '\n').trim();

  const text: string[] = [greeting, '', ...l.paragraphs.flatMap((p) => [p, ''])];
  if (l.message && body) text.push(l.message.label, ...body.split('\n').map((line) => `> ${line}`), '');
  if (l.action) {
    text.push(l.action.intro ?? t(l.locale, 'mail.openLink'), l.action.url, '');
    for (const p of l.action.after ?? []) text.push(p, '');
  }
  text.push('--', ...l.footer);
  const rtl = dirOf(l.locale) === 'rtl';
  const urls = new Set(l.action ? [l.action.url] : []);
  const textLines = rtl
    ? text.map((line) => (line === '' || line === '--' || urls.has(line) || line.startsWith('> ') ? line : RLM + line))
    : text;

  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`;
  const accent = accentOf(brand) ?? DEFAULT_ACCENT;
  const accentLine = accentOf(brand) ? `;border-top:4px solid ${accent}` : '';
  const logo =
    brand?.logoCid && /^[\w.@-]+$/.test(brand.logoCid)
      ? [
          `<img src="cid:${brand.logoCid}" alt="${escapeHtml(oneLine(brand.name))}" style="display:block;max-height:48px;max-width:200px;width:auto;height:auto;border:0;margin:0 0 24px">`,
        ]
      : [];
  const html: string[] = [
    '<!DOCTYPE html>',
    `<html lang="${l.locale}"${rtl ? ' dir="rtl"' : ''}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${escapeHtml(l.subject)}</title></head>`,
    `<body${rtl ? ' dir="rtl"' : ''} style="margin:0;padding:24px;background:#f4f5f7;font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#1f2328">`,
    `<div${rtl ? ' dir="rtl"' : ''} style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:32px${accentLine}${rtl ? ';text-align:right' : ''}">`,
    ...logo,
    p(greeting),
    ...l.paragraphs.map(p),
  ];
  if (l.message && body) {
    html.push(
      p(l.message.label),
      `<blockquote dir="auto" style="margin:0 0 16px;padding:8px 16px;border-${rtl ? 'right' : 'left'}:3px solid #d0d7de;color:#424a53">${body
        .split('\n')
        .map(escapeHtml)
        .join('<br>')}</blockquote>`,
    );
  }
  if (l.action) {
    const href = escapeHtml(l.action.url);
    html.push(
      `<p style="margin:24px 0"><a href="${href}" style="display:inline-block;padding:12px 24px;background:${accent};color:#ffffff;text-decoration:none;border-radius:6px;font-weight:bold">${escapeHtml(l.action.label)}</a></p>`,
      ...(l.action.after ?? []).map(p),
      `<p style="margin:0 0 16px;font-size:13px;color:#57606a">${escapeHtml(t(l.locale, 'mail.linkFallback'))}<br><a href="${href}" dir="ltr" style="color:${accent};word-break:break-all">${href}</a></p>`,
    );
  }
  html.push(
    '<hr style="border:none;border-top:1px solid #d0d7de;margin:24px 0">',
    ...l.footer.map((f) => `<p style="margin:0 0 8px;font-size:12px;color:#57606a">${escapeHtml(f)}</p>`),
    '</div></body></html>',
  );
  return { subject: oneLine(l.subject), text: textLines.join('\n') + '\n', html: html.join('\n') + '\n' };
}

/** The mails carrying a signer's link, by the catalogue section of their words. */
function request(kind: 'invitation' | 'reminder' | 'expiryWarning', locale: Locale, v: InvitationVars): Layout {
  const workspace = oneLine(v.workspaceName);
  const title = oneLine(v.documentTitle);
  const url = signerLink(v.baseUrl, v.token);
  const message = v.message?.trim();
  const date = formatDateTime(locale, v.expiresAt);
  return {
    locale,
    subject: t(locale, `mail.${kind}.subject`, { workspace, title }),
    signerName: v.signerName,
    paragraphs: [t(locale, `mail.${kind}.intro`, { workspace, title, date })],
    ...(message ? { message: { label: t(locale, 'mail.messageFrom', { workspace }), body: message } } : {}),
    action: {
      label: t(locale, 'mail.invitation.button'),
      url,
      after: [t(locale, 'mail.invitation.expires', { date })],
    },
    footer: [t(locale, 'mail.footer.why', { workspace }), t(locale, 'mail.footer.doNotForward')],
  };
}

function notice(
  kind: 'completed' | 'declined' | 'expired' | 'withdrawn',
  locale: Locale,
  v: { workspaceName: string; signerName: string; documentTitle: string },
  extra: Record<string, string>,
  more: MessageKey[] = [],
): Layout {
  const vars = { workspace: oneLine(v.workspaceName), title: oneLine(v.documentTitle), ...extra };
  return {
    locale,
    subject: t(locale, `mail.${kind}.subject`, vars),
    signerName: v.signerName,
    paragraphs: [t(locale, `mail.${kind}.intro`, vars), ...more.map((k) => t(locale, k, vars))],
    footer: [t(locale, 'mail.footer.why', vars)],
  };
}

/** Everyone signed: with the signer's copy link when there is one, else the notice alone. */
function completed(locale: Locale, v: CompletedVars): Layout {
  if (!v.copy) return notice('completed', locale, v, {}, ['mail.completed.body']);
  const vars = { workspace: oneLine(v.workspaceName), title: oneLine(v.documentTitle) };
  const days = Math.round(SIGNER_COPY_VALIDITY_MS / 86_400_000);
  return {
    locale,
    subject: t(locale, 'mail.completed.subject', vars),
    signerName: v.signerName,
    paragraphs: [t(locale, 'mail.completed.intro', vars), t(locale, 'mail.completed.copy', vars)],
    action: {
      label: t(locale, 'mail.completed.button'),
      url: copyLink(v.copy.baseUrl, v.copy.token),
      intro: t(locale, 'mail.completed.openLink'),
      after: [t(locale, 'mail.completed.expires', { days, date: formatDateTime(locale, v.copy.expiresAt) })],
    },
    footer: [t(locale, 'mail.footer.why', vars), t(locale, 'mail.completed.doNotForward')],
  };
}

function memberInvitation(locale: Locale, v: MemberInvitationVars): Layout {
  if (!/^https?:\/\/[^\s]+$/i.test(v.url)) throw new Error(`url must be an http(s) URL, got "${v.url}"`);
  const vars = { workspace: oneLine(v.workspaceName), inviter: oneLine(v.inviterEmail) };
  return {
    locale,
    subject: t(locale, 'mail.memberInvitation.subject', vars),
    signerName: '',
    paragraphs: [t(locale, 'mail.memberInvitation.intro', vars)],
    action: {
      label: t(locale, 'mail.memberInvitation.button'),
      url: v.url,
      after: [t(locale, 'mail.memberInvitation.expires', { date: formatDateTime(locale, v.expiresAt) })],
    },
    footer: [t(locale, 'mail.memberInvitation.footer', vars), t(locale, 'mail.footer.doNotForward')],
  };
}

function verificationCode(locale: Locale, v: VerificationCodeVars): Layout {
  const vars = { workspace: oneLine(v.workspaceName), title: oneLine(v.documentTitle) };
  const minutes = VERIFICATION_CODE_TTL_MS / 60_000;
  return {
    locale,
    subject: t(locale, 'mail.verificationCode.subject', { ...vars, code: v.code }),
    signerName: v.signerName,
    paragraphs: [
      t(locale, 'mail.verificationCode.intro', vars),
      v.code,
      t(locale, 'mail.verificationCode.expires', { date: formatDateTime(locale, v.expiresAt), minutes }),
      t(locale, 'mail.verificationCode.notYou'),
    ],
    footer: [t(locale, 'mail.footer.why', vars)],
  };
}

const builders: { [N in TemplateName]: (locale: Locale, vars: TemplateVars[N]) => Layout } = {
  invitation: (locale, v) => request('invitation', locale, v),
  reminder: (locale, v) => request('reminder', locale, v),
  expiry_warning: (locale, v) => request('expiryWarning', locale, v),
  completed,
  declined: (locale, v) => notice('declined', locale, v, { decliner: oneLine(v.declinedByName) }),
  expired: (locale, v) => notice('expired', locale, v, { date: formatDateTime(locale, v.expiredAt) }),
  withdrawn: (locale, v) => notice('withdrawn', locale, v, {}),
  member_invitation: memberInvitation,
  verification_code: verificationCode,
};

export const isTemplateName = (name: unknown): name is TemplateName =>
  typeof name === 'string' && (TEMPLATE_NAMES as readonly string[]).includes(name);

/**
 * Builds one e-mail, in the sending workspace's colours when `brand` is given. Throws on an unknown template or a
 * non-http(s) base URL (programming errors).
 */
export function renderMail<N extends TemplateName>(
  template: N,
  locale: Locale,
  vars: TemplateVars[N],
  brand?: MailBrand | null,
): RenderedMail {
  const build = builders[template] as ((l: Locale, v: TemplateVars[N]) => Layout) | undefined;
  if (!build) throw new Error(`unknown mail template "${String(template)}"`);
  return render(build(locale, vars), brand);
}
