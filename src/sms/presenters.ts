// The operator views of an SMS outbox row (`signet sms list`, `signet sms show`). The body carries the signer's
// link, so the list never shows it; only `show` of one row does, for operators.
import { iso } from '../lib/clock.js';
import type { SmsRow, SmsStatus } from './outbox.repo.js';

export type SmsView = {
  id: string;
  /** E.164. */
  to: string;
  template: string;
  status: SmsStatus;
  attempts: number;
  provider_id: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  document_id: string | null;
  signing_request_id: string | null;
};

export type SmsDetail = SmsView & {
  workspace_id: string;
  locale: string;
  next_attempt_at: string | null;
  body: string;
};

export const presentSms = (r: SmsRow): SmsView => ({
  id: r.id,
  to: r.to_phone,
  template: r.template,
  status: r.status as SmsStatus,
  attempts: r.attempts,
  provider_id: r.provider_id,
  last_error: r.last_error,
  created_at: iso(r.created_at),
  sent_at: r.sent_at === null ? null : iso(r.sent_at),
  document_id: r.document_id,
  signing_request_id: r.signing_request_id,
});

export const presentSmsDetail = (r: SmsRow): SmsDetail => ({
  ...presentSms(r),
  workspace_id: r.workspace_id,
  locale: r.locale,
  next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
  body: r.body,
});
