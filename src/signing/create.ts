// POST /v1/signing-requests: one document and one signing request per signer. Guarantees: nothing is created when
// a request is refused (body, roles, locale, expiry, callback URL and the monthly cap are checked, and the file is
// fetched, inspected and placed in worker threads, before the one transaction that writes anything); that
// transaction opens the document (open.ts: the document, the requests with token hashes only, the callback hook,
// `document.created`), then writes one `signing_request.sent` per signer and the invitations of those released now.
import { iso } from '../lib/clock.js';
import { isEmailAddress } from '../lib/email.js';
import { requireFeature } from '../workspaces/features.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { fileOf } from './file-input.js';
import {
  callbackUrlOf,
  checkMonthlyCap,
  newRequestRow,
  openDocument,
  resolveExpiry,
  resolveLocale,
  resolveReminders,
} from './open.js';
import { policyColumns } from './reminder-policy.js';
import { keyActor, presentRequestBrief, sentEventFields } from './presenters.js';
import type { CreateBody, Created } from './signing.schemas.js';
import type { RequestRow } from './signing.repo.js';
import { invalid, invitationMessage, type SigningDeps } from './signing.service.js';
import { inTransaction } from './transition.js';
import { assertVerificationAvailable } from './verification.service.js';
import { toE164 } from '../sms/phone.js';

/**
 * Each signer's verification (issue 22): `sms_code` needs the Enterprise plan (402, checked first) and an E.164
 * `phone` (422 invalid_recipients, every problem listed). The phone is kept only for `sms_code`.
 */
async function verificationOf(deps: SigningDeps, auth: AuthContext, signers: CreateBody['signers']) {
  if (signers.some((s) => s.verification === 'sms_code')) requireFeature(auth.workspace, 'sms_verification');
  const problems: Array<{ signer: number; field: string; code: string; message: string }> = [];
  const out = signers.map((s, i) => {
    const at = `signers[${i}]`;
    const phone = s.phone === undefined ? null : toE164(s.phone.trim());
    if (s.phone !== undefined && phone === null)
      problems.push({ signer: i, field: `${at}.phone`, code: 'invalid_phone', message: `${at}.phone is not E.164.` });
    else if (s.verification === 'sms_code' && phone === null)
      problems.push({ signer: i, field: `${at}.phone`, code: 'phone_required', message: `${at} needs a phone.` });
    const v = s.verification ?? 'none';
    return v === 'none' ? {} : { verification: v, ...(v === 'sms_code' ? { phone } : {}) };
  });
  if (problems.length) throw apiError('invalid_recipients', { message: problems[0]!.message, meta: { problems } });
  if (out.some((o) => 'verification' in o)) await assertVerificationAvailable(deps.db);
  return out;
}

function validateSigners(signers: CreateBody['signers']): void {
  const roles = new Set<string>();
  signers.forEach((s, i) => {
    if (!isEmailAddress(s.email)) throw invalid(`signers[${i}].email`, `signers[${i}].email is not an e-mail address.`);
    if (s.name.trim() === '') throw invalid(`signers[${i}].name`, `signers[${i}].name is empty.`);
    if (roles.has(s.role)) throw invalid(`signers[${i}].role`, `Role "${s.role}" appears twice; roles must be unique.`);
    roles.add(s.role);
  });
}

export async function createSigningRequest(
  deps: SigningDeps,
  auth: AuthContext,
  body: CreateBody,
  meta: ClientMeta,
): Promise<Created> {
  if (body.placement === 'manual') throw apiError('placement_retired');
  // Never pretend a seal is qualified: without a qualified provider there is no QES to give.
  if (body.signature_level === 'qes') {
    requireFeature(auth.workspace, 'qes');
    if (!deps.config.qes) throw apiError('qes_unavailable');
  }
  const now = deps.clock.now();

  validateSigners(body.signers);
  const verification = await verificationOf(deps, auth, body.signers);
  const locale = resolveLocale(body.locale, auth);
  const expiresAt = resolveExpiry(body.expires_at, now);
  const order = body.signing_order ?? 'parallel';
  if ((body.file === undefined) === (body.file_url === undefined))
    throw invalid('file', 'Give exactly one of file or file_url.');
  if (body.placement === 'coordinates' && !body.fields?.length)
    throw invalid('fields', 'placement "coordinates" needs fields[].');
  if (body.placement !== 'coordinates' && body.fields !== undefined)
    throw invalid('fields', 'fields[] is only used with placement "coordinates".');
  const callbackUrl = await callbackUrlOf(deps, body.callback_url);
  const reminders = await resolveReminders(deps, auth.workspace.id, body.reminders);
  await checkMonthlyCap(deps, auth, now);

  const original = await fileOf(deps, body);
  const fileName =
    body.file?.name ?? decodeURIComponent(new URL(body.file_url!).pathname.split('/').pop() || 'document.pdf');
  const info = await deps.pdf.inspect(original);
  const roles = body.signers.map((s) => s.role);
  const prepared = await deps.pdf.prepare(
    original,
    body.placement === 'anchors'
      ? { mode: 'anchors', roles }
      : body.placement === 'auto_append'
        ? { mode: 'auto_append', signers: body.signers, locale }
        : { mode: 'coordinates', roles, fields: body.fields! },
  );

  const docId = newId('doc');
  const storedName = fileName.slice(0, 255);
  const title = (body.title ?? fileName.replace(/\.pdf$/i, '')).slice(0, 200) || 'Untitled document';
  const tokens: string[] = [];
  const requests: RequestRow[] = body.signers.map((s, i) => {
    const { row, token } = newRequestRow(
      { id: docId, workspace_id: auth.workspace.id, expires_at: expiresAt, ...policyColumns(reminders) },
      { slot: i + 1, role: s.role, email: s.email, name: s.name.trim(), ...verification[i] },
      order === 'parallel' || i === 0,
      now,
    );
    tokens.push(token);
    return row;
  });

  const callback = await inTransaction(
    deps,
    async (tx) => {
      const { doc, callback } = await openDocument(deps, tx, {
        auth,
        meta,
        document: {
          id: docId,
          title,
          message: body.message ?? null,
          locale,
          status: 'in_progress',
          signingOrder: order,
          placement: body.placement,
          fileName: storedName,
          pageCount: prepared.pageCount,
          fields: prepared.fields,
          original: { sha256: info.sha256, bytes: original },
          prepared: prepared.pdf,
          expiresAt,
          reminders,
          ...(body.signature_level === 'qes' ? { signatureLevel: 'qes' as const } : {}),
        },
        requests,
        callbackUrl,
        detail: {
          sha256: info.sha256,
          file_name: storedName,
          pages: prepared.pageCount,
          placement: body.placement,
          signing_order: order,
        },
      });
      for (const [i, r] of requests.entries()) {
        const queued = r.status === 'queued';
        await tx.audit(doc, {
          action: 'signing_request.sent',
          actor: keyActor(auth),
          signingRequestId: r.id,
          detail: { email: r.email, role: r.role, queued },
        });
        await tx.emit('signing_request.sent', doc.workspace_id, sentEventFields(doc, r, 'v1_api'));
        if (!queued) await tx.mail(invitationMessage(doc, r, tokens[i]!, 'invitation', deps.config.baseUrl));
      }
      return callback;
    },
    now,
  );

  return {
    document_id: docId,
    status: 'in_progress',
    signing_order: order,
    expires_at: iso(expiresAt),
    signing_requests: requests.map(presentRequestBrief),
    reminders,
    ...(callback ? { callback } : {}),
  };
}
