// The operator view of an outbox row (`signet mail list`). Bodies hold signer links: operators only.
import { iso } from '../lib/clock.js';
import type { MailRow, MailStatus } from './outbox.repo.js';

export type MailView = {
  id: string;
  workspace_id: string;
  document_id: string | null;
  signing_request_id: string | null;
  template: string;
  locale: string;
  to_email: string;
  to_name: string;
  reply_to: string | null;
  subject: string;
  text: string;
  html: string;
  status: MailStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  message_id: string | null;
  created_at: string;
  sent_at: string | null;
};

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
