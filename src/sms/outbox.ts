// The SMS outbox as the rest of the service sees it. Guarantee: a message is validated, rendered and written inside
// the caller's transaction, so it exists exactly when the state change that caused it committed; nothing goes on
// the wire before that (sender.ts sends). Also the operator's reads (`signet sms list`, `signet sms show`).
import type { Kysely } from 'kysely';
import type { Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { newOrderedId } from '../lib/ids.js';
import { isKnownLocale, type Locale } from '../i18n/i18n.js';
import { isSmsTemplateName, renderSms, type SmsTemplateName, type SmsVars } from './messages.js';
import { findSms, findSmsOutbox, insertSms, workspaceNameOf, type SmsStatus } from './outbox.repo.js';
import { toE164 } from './phone.js';
import { presentSms, presentSmsDetail, type SmsDetail, type SmsView } from './presenters.js';

export type OutgoingSms = {
  workspaceId: string;
  documentId?: string | null;
  signingRequestId?: string | null;
  /** E.164; callers validate it first (an invalid number throws). */
  to: string;
  locale: Locale;
  template: SmsTemplateName;
  /** The workspace name is filled in from the workspace row. */
  vars: Omit<SmsVars, 'workspaceName'>;
};

export type SmsQueue = {
  /** Renders and queues a message in the caller's transaction (or on the plain Kysely instance). */
  enqueue(trx: Kysely<Database>, msg: OutgoingSms): Promise<{ id: string; status: 'queued' }>;
};

export function createSmsQueue(clock: Clock): SmsQueue {
  return {
    async enqueue(trx, msg) {
      if (!isKnownLocale(msg.locale)) throw new Error(`unknown locale "${String(msg.locale)}"`);
      if (!isSmsTemplateName(msg.template)) throw new Error(`unknown SMS template "${String(msg.template)}"`);
      const to = typeof msg.to === 'string' ? toE164(msg.to) : null;
      if (to === null) throw new Error(`not an E.164 phone number: ${JSON.stringify(msg.to)}`);
      const workspaceName = await workspaceNameOf(trx, msg.workspaceId);
      if (workspaceName === undefined) throw new Error(`no workspace ${msg.workspaceId}`);
      const body = renderSms(msg.template, msg.locale, { ...msg.vars, workspaceName });
      const now = clock.now();
      const id = newOrderedId('sms');
      await insertSms(trx, {
        id,
        workspace_id: msg.workspaceId,
        document_id: msg.documentId ?? null,
        signing_request_id: msg.signingRequestId ?? null,
        template: msg.template,
        locale: msg.locale,
        to_phone: to,
        body,
        status: 'queued',
        attempts: 0,
        next_attempt_at: now,
        claimed_by: null,
        claim_expires_at: null,
        last_error: null,
        provider_id: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      });
      return { id, status: 'queued' };
    },
  };
}

/** Newest first (limit 50 by default, at most 500); without bodies. */
export async function listSms(
  db: Db,
  opts: {
    status?: SmsStatus;
    documentId?: string;
    signingRequestId?: string;
    workspaceId?: string;
    limit?: number;
  } = {},
): Promise<SmsView[]> {
  return (await findSmsOutbox(db, opts)).map(presentSms);
}

/** One row with its body (which carries the signer's link): operators only. */
export async function getSms(db: Db, id: string): Promise<SmsDetail | undefined> {
  const row = await findSms(db, id);
  return row && presentSmsDetail(row);
}
