// The mail outbox as the rest of the service sees it. Guarantee: a message is rendered and written inside the
// caller's transaction, so it exists exactly when the state change that caused it committed; nothing goes on the
// wire before that (mailer.ts sends). Also the operator's reads (`signet mail list`).
import type { Kysely } from 'kysely';
import type { Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { newOrderedId } from '../lib/ids.js';
import { isKnownLocale, type Locale } from '../i18n/i18n.js';
import { isHeaderAddress } from '../lib/email.js';
import { findMail, findOutbox, insertMail, mailSenderOf } from './outbox.repo.js';
import { presentMail, type MailView } from './presenters.js';
import {
  isTemplateName,
  oneLine,
  renderMail,
  type MailBrand,
  type TemplateName,
  type TemplateVars,
} from './templates.js';

/**
 * The Content-ID of a message's inline logo. The HTML names it when the workspace had a logo at queueing; smtp.ts
 * attaches the workspace's logo under it at sending (or drops the image if the logo is gone by then).
 */
export const logoCid = (mailId: string): string => `logo.${mailId}@signet`;

/** The logo types a mail attaches (PNG and JPEG, as the settings accept). */
const LOGO_TYPES: readonly string[] = ['image/png', 'image/jpeg'];

/** The workspace's brand as its mails show it (a row from before migration 022 has none). */
const mailBrand = (
  ws: { name: string; brand_color?: string | null; logo_blob?: string | null; logo_type?: string | null },
  mailId: string,
): MailBrand => ({
  name: ws.name,
  color: ws.brand_color ?? null,
  logoCid: ws.logo_blob && LOGO_TYPES.includes(ws.logo_type ?? '') ? logoCid(mailId) : null,
});

/** Template and its variables; the workspace name is filled in from the workspace row. */
export type MailContent = {
  [N in TemplateName]: { template: N; vars: Omit<TemplateVars[N], 'workspaceName'> };
}[TemplateName];

export type OutgoingMail = MailContent & {
  workspaceId: string;
  to: { email: string; name: string };
  /** Reply-To address; omitted means the workspace's reply_to, null means none. */
  replyTo?: string | null;
  locale: Locale;
  documentId?: string | null;
  signingRequestId?: string | null;
};

export type MailQueue = {
  /** Renders and queues a message in the caller's transaction (or on the plain Kysely instance). */
  enqueue(trx: Kysely<Database>, msg: OutgoingMail): Promise<{ id: string; status: 'queued' }>;
};

export function createMailQueue(clock: Clock): MailQueue {
  return {
    async enqueue(trx, msg) {
      if (!isKnownLocale(msg.locale)) throw new Error(`unknown locale "${String(msg.locale)}"`);
      if (!isTemplateName(msg.template)) throw new Error(`unknown mail template "${String(msg.template)}"`);
      const toEmail = msg.to.email.trim();
      if (!isHeaderAddress(toEmail)) throw new Error(`not a plain e-mail address: "${msg.to.email}"`);
      const ws = await mailSenderOf(trx, msg.workspaceId);
      if (!ws) throw new Error(`no workspace ${msg.workspaceId}`);
      const replyTo = msg.replyTo === undefined ? ws.reply_to : msg.replyTo;
      if (replyTo != null && !isHeaderAddress(replyTo))
        throw new Error(`reply-to is not a plain e-mail address: "${replyTo}"`);
      const id = newOrderedId('mail');
      const vars = { ...msg.vars, workspaceName: ws.name } as never;
      const rendered = renderMail(msg.template, msg.locale, vars, mailBrand(ws, id));
      const now = clock.now();
      await insertMail(trx, {
        id,
        workspace_id: msg.workspaceId,
        document_id: msg.documentId ?? null,
        signing_request_id: msg.signingRequestId ?? null,
        template: msg.template,
        locale: msg.locale,
        to_email: toEmail,
        to_name: oneLine(msg.to.name),
        from_name: oneLine(ws.name),
        reply_to: replyTo ?? null,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        status: 'queued',
        attempts: 0,
        next_attempt_at: now,
        claimed_by: null,
        claim_expires_at: null,
        last_error: null,
        message_id: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      });
      return { id, status: 'queued' };
    },
  };
}

/** Newest first (limit 50 by default, at most 500). `to` matches the address case-insensitively. */
export const listOutbox = async (db: Db, opts: Parameters<typeof findOutbox>[1] = {}): Promise<MailView[]> =>
  (await findOutbox(db, opts)).map(presentMail);

export async function getMail(db: Db, id: string): Promise<MailView | undefined> {
  const row = await findMail(db, id);
  return row && presentMail(row);
}
