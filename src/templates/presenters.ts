// The wire format of templates, versions and instances, and of their event payloads, written once. Review links
// appear only where the spec puts them: the instance's `review_url` and the `template_instance.staged` event.
import { iso } from '../lib/clock.js';
import type { AuthContext } from '../http/request-context.js';
import { keyActor } from '../signing/presenters.js';
import type { InstanceRow, TemplateRow, VersionRow } from './templates.repo.js';
import type { InstanceOut, RecipientOut } from './instances.schemas.js';
import type { SlotOut, TemplateFieldOut, TemplateOut, VersionOut } from './templates.schemas.js';

const t = (ms: number | null) => (ms === null ? null : iso(ms));

export const versionSlots = (v: VersionRow): SlotOut[] => JSON.parse(v.slots) as SlotOut[];
export const versionFields = (v: VersionRow): TemplateFieldOut[] => JSON.parse(v.fields) as TemplateFieldOut[];
/** A resolved recipient; `verification` is kept on the instance row and never put in an event's `recipients[]`. */
export type Resolved = RecipientOut & { verification?: 'email_code' | 'sms_code' };

/** The recipients as events and answers carry them (the spec's payload: without verification). */
export const plainRecipients = (rs: readonly Resolved[]): RecipientOut[] => rs.map(({ verification: _, ...r }) => r);

export const instanceRecipients = (i: InstanceRow): Resolved[] => JSON.parse(i.recipients) as Resolved[];

export const presentTemplate = (tpl: TemplateRow, v: VersionRow): TemplateOut => ({
  id: tpl.id,
  name: tpl.name,
  current_version: tpl.current_version,
  slots: versionSlots(v),
  fields: versionFields(v),
  page_count: v.page_count,
  archived_at: t(tpl.archived_at),
  created_at: iso(tpl.created_at),
  updated_at: iso(tpl.updated_at),
});

export const presentVersion = (v: VersionRow): VersionOut => ({
  template_id: v.template_id,
  version: v.version,
  file_name: v.file_name,
  page_count: v.page_count,
  sha256: v.original_sha256,
  slots: versionSlots(v),
  fields: versionFields(v),
  created_at: iso(v.created_at),
});

/** The review page's address; the token exists only in this URL (its hash is stored). */
export const reviewUrl = (baseUrl: string, token: string) => `${baseUrl}/review/${token}`;

export const presentInstance = (i: InstanceRow, review?: { url: string }): InstanceOut => ({
  id: i.id,
  status: i.status,
  kind: i.kind,
  template_id: i.template_id,
  template_version: i.template_version,
  document_id: i.document_id,
  recipients: plainRecipients(instanceRecipients(i)),
  ...(review ? { review_url: review.url } : {}),
  ...(i.review_expires_at !== null ? { review_expires_at: iso(i.review_expires_at) } : {}),
  confirmed_at: t(i.confirmed_at),
  confirmed_by: i.confirmed_by,
  discarded_at: t(i.discarded_at),
  discard_reason: i.discard_reason,
  created_at: iso(i.created_at),
});

/** Fields every `template_instance.*` event carries. */
export const instanceEventFields = (i: InstanceRow) => ({
  instance_id: i.id,
  document_id: i.document_id,
  template_id: i.template_id,
  template_version: i.template_version,
  kind: i.kind,
});

/** Who confirmed, as audit entries name them: the caller's actor (an API key, a dashboard person), or the review page. */
export const templateActor = (auth: AuthContext | null) => (auth ? keyActor(auth) : 'review_page');
