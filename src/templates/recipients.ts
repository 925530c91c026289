// A template instance's recipients: who may be named (the channel rule of the plan), and the checks and resolution
// shared by instantiate and confirm. Guarantee: every problem is reported at once (422 invalid_recipients with
// `meta.problems[]`), before anything is looked up further or written.
import { isEmailAddress } from '../lib/email.js';
import { apiError } from '../lib/errors.js';
import type { AuthContext } from '../http/request-context.js';
import { toE164 } from '../sms/phone.js';
import { requireFeature } from '../workspaces/features.js';
import { versionFields, versionSlots, type Resolved } from './presenters.js';
import type { VersionRow } from './templates.repo.js';
import type { RecipientIn } from './instances.schemas.js';

type RecipientProblem = { recipient: number; field: string; code: string; message: string };

/** `channel: "sms"` is a template channel: Enterprise only, refused before anything is looked up or created. */
export function checkChannels(auth: AuthContext, recipients: readonly RecipientIn[] | undefined): void {
  if (recipients?.some((r) => r.channel === 'sms')) requireFeature(auth.workspace, 'template_channels');
  if (recipients?.some((r) => r.verification === 'sms_code')) requireFeature(auth.workspace, 'sms_verification');
}

/**
 * The recipients as they will be invited, in turn order, or every problem with them: 422 invalid_recipients
 * (meta.problems[]) and 422 missing_recipients (meta.slots) when a slot with fields has nobody.
 */
export function resolveRecipients(
  version: VersionRow,
  input: readonly RecipientIn[],
  o: { confirm: boolean },
): Resolved[] {
  const slots = versionSlots(version);
  const problems: RecipientProblem[] = [];
  const seenSlots = new Set<string>();
  const seenOrders = new Set<number>();
  const out: Resolved[] = [];
  input.forEach((r, i) => {
    const at = `recipients[${i}]`;
    const add = (field: string, code: string, message: string) =>
      problems.push({ recipient: i, field: `${at}.${field}`, code, message });
    const slot = slots.find((s) => s.name === r.slot);
    if (!slot) add('slot', 'unknown_slot', `${at}.slot "${r.slot}" is not a slot of this template.`);
    else if (seenSlots.has(r.slot)) add('slot', 'duplicate_slot', `Slot "${r.slot}" has more than one recipient.`);
    seenSlots.add(r.slot);
    if (r.name.trim() === '') add('name', 'name_required', `${at}.name is empty.`);
    const channel = r.channel ?? 'email';
    const email = r.email?.trim() || null;
    if (email !== null && !isEmailAddress(email))
      add('email', 'invalid_email', `${at}.email is not an e-mail address.`);
    if (channel === 'email' && email === null) add('email', 'email_required', `${at} needs an email (channel email).`);
    let phone: string | null = null;
    if (r.phone !== undefined) {
      phone = toE164(r.phone.trim());
      if (phone === null) add('phone', 'invalid_phone', `${at}.phone is not an E.164 number (like +14155550100).`);
    } else if (channel === 'sms') add('phone', 'phone_required', `${at} needs a phone number (channel sms).`);
    if (r.verification === 'sms_code' && r.phone === undefined && channel !== 'sms')
      add('phone', 'phone_required', `${at} needs a phone number (verification sms_code).`);
    if (r.verification === 'email_code' && email === null)
      add('email', 'email_required', `${at} needs an email (verification email_code).`);
    if (o.confirm && r.signing_order !== undefined) {
      if (seenOrders.has(r.signing_order))
        add('signing_order', 'duplicate_signing_order', `signing_order ${r.signing_order} is given twice.`);
      seenOrders.add(r.signing_order);
    }
    out.push({
      slot: r.slot,
      name: r.name.trim(),
      email,
      phone,
      channel,
      signing_order: r.signing_order ?? slot?.signing_order ?? 1,
      ...(r.verification && r.verification !== 'none' ? { verification: r.verification } : {}),
    });
  });
  if (problems.length)
    throw apiError('invalid_recipients', {
      message: `${problems.length} recipient problem(s): ${problems[0]!.message}`,
      meta: { problems },
    });
  const withFields = new Set(versionFields(version).map((f) => f.slot));
  const missing = slots.filter((s) => withFields.has(s.name) && !seenSlots.has(s.name)).map((s) => s.name);
  if (missing.length)
    throw apiError('missing_recipients', {
      message: `No recipient for slot(s) ${missing.join(', ')}, which have fields.`,
      meta: { slots: missing },
    });
  const slotIndex = (name: string) => slots.findIndex((s) => s.name === name);
  return out.sort((a, b) => a.signing_order - b.signing_order || slotIndex(a.slot) - slotIndex(b.slot));
}
