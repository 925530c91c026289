// The operator view of an outbox row (`signet mail list`). Bodies hold signer links: operators only.
import { iso } from '../lib/clock.js';
import type { MailRow, MailStatus } from './outbox.repo.js';

/** A row as operators see it: times as ISO strings; the sender's lease and internal columns left out. */
export type MailView = Omit<
  MailRow,
  | 'from_name'
  | 'claimed_by'
  | 'claim_expires_at'
  | 'updated_at'
  | 'status'
  | 'next_attempt_at'
  | 'created_at'
  | 'sent_at'
> & { status: MailStatus; next_attempt_at: string | null; created_at: string; sent_at: string | null };

export const presentMail = (r: MailRow): MailView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  document_id: r.document_id,
  signing_request_id: r.signing_request_id,
  template: r.template,
  locale: r.locale,
  to_email: r.to_email,
  to_name: r.to_name,
  reply_to: r.reply_to,
  subject: r.subject,
  text: r.text,
  html: r.html,
  status: r.status as MailStatus,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
  last_error: r.last_error,
  message_id: r.message_id,
  created_at: iso(r.created_at),
  sent_at: r.sent_at === null ? null : iso(r.sent_at),
});
