// Template instances: instantiate (a document for recipients) and generate (a finished file, no signers), each sent
// at once or staged for review (staging.ts confirms or discards it later). Guarantees:
// - nothing is created when a call is refused: tier, template, version, recipients, field values, expiry, callback
//   and the monthly cap are checked, and the PDF rendered in a worker thread, before the one transaction that writes;
// - that transaction opens the document (signing/open.ts) and writes the instance; a staged instance has a `draft`
//   document: nobody is invited and nothing is sealed until it is confirmed;
// - a release (at once, or at confirm) emits exactly one `signing_request.sent` (source `template_instance`) for the
//   first recipient released; later turns emit none (signing.service.ts releases them);
// - review links carry a one-time link token (lib/tokens.ts); only its hash is stored;
// - with review staging off (SIGNET_REVIEW_STAGING=0), `review: true` is refused before any lookup: 503
//   review_unavailable without Retry-After (waiting will not help); instances staged earlier still confirm or discard.
import { iso } from '../lib/clock.js';
import { apiError, ApiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { linkTokenHash, newLinkToken } from '../lib/tokens.js';
import { DEFAULT_EXPIRY_MS, REVIEW_WINDOW_MS } from '../limits.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { defaultLocaleOf } from '../workspaces/locale.js';
import type { Field } from '../documents/pdf/types.js';
import type { Stamp } from '../documents/pdf/stamp.js';
import {
  callbackUrlOf,
  checkMonthlyCap,
  newRequestRow,
  openDocument,
  resolveExpiry,
  resolveLocale,
  resolveReminders,
} from '../signing/open.js';
import type { Reminders } from '../signing/reminder-policy.js';
import { keyActor, sentEventFields } from '../signing/presenters.js';
import { insertRequests, markSealPending, type DocumentRow, type RequestRow } from '../signing/signing.repo.js';
import { inviteSigner } from '../signing/signing.service.js';
import { inTransaction, type Tx } from '../signing/transition.js';
import { templateInputError } from '../documents/fields.js';
import { recipientRules, stampKind, validateFieldValues } from './fields.js';
import {
  instanceEventFields,
  plainRecipients,
  presentInstance,
  reviewUrl,
  templateActor,
  versionFields,
  type Resolved,
} from './presenters.js';
import { checkChannels, resolveRecipients } from './recipients.js';
import { assertVerificationAvailable } from '../signing/verification.service.js';
import type { InstanceKind } from './states.js';
import {
  findInstance,
  findInstanceByReviewHash,
  insertInstance,
  type InstanceRow,
  type VersionRow,
} from './templates.repo.js';
import type { GenerateBody, InstanceCreated, InstantiateBody } from './instances.schemas.js';
import { SENDER_SLOT, type TemplateFieldOut } from './templates.schemas.js';
import { templateOf, versionOf, type TemplatesDeps } from './templates.service.js';

/** The sender's values stamped onto the version's PDF, in a worker thread; a failure is 502 render_failed. */
async function render(deps: TemplatesDeps, version: VersionRow, resolved: Record<string, string>): Promise<Uint8Array> {
  const stamps: Stamp[] = [];
  for (const f of versionFields(version)) {
    const text = resolved[f.key];
    if (f.slot !== SENDER_SLOT || text === undefined || text === '') continue;
    const field: Field = {
      id: f.key,
      role: SENDER_SLOT,
      type: stampKind(f.type) as Field['type'],
      page: f.page,
      ...f.box,
    };
    stamps.push({ field, value: { kind: f.type === 'date' ? 'date' : 'text', text } });
  }
  try {
    const prepared = await deps.blobs.get(version.prepared_blob);
    return stamps.length ? await deps.pdf.stamp(prepared, stamps) : prepared;
  } catch (err) {
    throw renderFailed(err);
  }
}

const renderFailed = (err: unknown) =>
  err instanceof ApiError && err.status < 500
    ? err
    : apiError('render_failed', { message: 'The PDF could not be rendered; nothing was created or sent.' });

/** The recipients' fields as the signer page and the sealing job read them (role = slot name). */
const recipientFields = (fields: TemplateFieldOut[]): Field[] =>
  fields
    .filter((f) => f.slot !== SENDER_SLOT)
    .map((f, i) => ({ id: `f${i + 1}`, role: f.slot, ...recipientRules(f), page: f.page, ...f.box }));

type Prepared = {
  within?: InstantiateOptions['within'];
  kind: InstanceKind;
  auth: AuthContext;
  templateId: string;
  version: VersionRow;
  recipients: Resolved[];
  resolved: Record<string, string>;
  rendered: Uint8Array;
  review: boolean;
  title: string;
  message: string | null;
  locale: string;
  expiresAt: number;
  callbackUrl: string | null;
  reminders: Reminders;
  now: number;
};

/** `review: true` on a deployment whose review staging is off: refused before anything else is looked at. */
function assertStagingOn(deps: TemplatesDeps, review: boolean | undefined): void {
  if (review === true && !deps.config.reviewStaging)
    throw apiError('review_unavailable', {
      message: 'Staging for review is switched off on this deployment; send without review.',
    });
}

/** Every check of instantiate but the monthly cap, in its order; looks things up, writes nothing. */
async function checkInstantiate(deps: TemplatesDeps, auth: AuthContext, templateId: string, body: InstantiateBody) {
  assertStagingOn(deps, body.review);
  checkChannels(auth, body.recipients);
  const now = deps.clock.now();
  const tpl = await templateOf(deps, auth, templateId, { archived: false });
  const version = await versionOf(deps, tpl, body.version);
  const locale = resolveLocale(body.locale, auth);
  const recipients = resolveRecipients(version, body.recipients, { confirm: false });
  if (recipients.some((r) => r.verification)) await assertVerificationAvailable(deps.db);
  const { resolved, problems } = validateFieldValues(versionFields(version), body.field_values);
  if (problems.length) throw templateInputError(problems);
  const expiresAt = resolveExpiry(body.expires_at, now);
  const callbackUrl = await callbackUrlOf(deps, body.callback_url);
  const reminders = await resolveReminders(deps, auth.workspace.id, body.reminders);
  return { now, tpl, version, locale, recipients, resolved, expiresAt, callbackUrl, reminders };
}

/** A dry run of instantiate (bulk sends): throws what instantiate would, the monthly cap aside; creates nothing. */
export async function validateInstantiate(
  deps: TemplatesDeps,
  auth: AuthContext,
  templateId: string,
  body: InstantiateBody,
): Promise<void> {
  await checkInstantiate(deps, auth, templateId, body);
}

/**
 * `within` (bulk sends) runs inside the transaction that writes the instance: what it records commits with the
 * instance or not at all, and it throws to roll both back.
 */
export type InstantiateOptions = { within?: (tx: Tx, instanceId: string) => Promise<void> };

/** POST /v1/templates/{id}/instantiate. */
export async function instantiate(
  deps: TemplatesDeps,
  auth: AuthContext,
  templateId: string,
  body: InstantiateBody,
  meta: ClientMeta,
  o: InstantiateOptions = {},
): Promise<InstanceCreated> {
  const c = await checkInstantiate(deps, auth, templateId, body);
  await checkMonthlyCap(deps, auth, c.now);
  const rendered = await render(deps, c.version, c.resolved);
  return openInstance(deps, meta, {
    kind: 'instantiate',
    within: o.within,
    reminders: c.reminders,
    auth,
    templateId: c.tpl.id,
    version: c.version,
    recipients: c.recipients,
    resolved: c.resolved,
    rendered,
    review: body.review === true,
    title: (body.title ?? c.tpl.name).slice(0, 200) || 'Untitled document',
    message: body.message ?? null,
    locale: c.locale,
    expiresAt: c.expiresAt,
    callbackUrl: c.callbackUrl,
    now: c.now,
  });
}

/** POST /v1/templates/{id}/generate: the sender's values rendered into a finished, sealed file with no signers. */
export async function generate(
  deps: TemplatesDeps,
  auth: AuthContext,
  templateId: string,
  body: GenerateBody,
  meta: ClientMeta,
): Promise<InstanceCreated> {
  assertStagingOn(deps, body.review);
  const now = deps.clock.now();
  const tpl = await templateOf(deps, auth, templateId, { archived: false });
  const version = await versionOf(deps, tpl, body.version);
  const { resolved, problems } = validateFieldValues(versionFields(version), body.field_values);
  if (problems.length) throw templateInputError(problems);
  const callbackUrl = await callbackUrlOf(deps, body.callback_url);
  await checkMonthlyCap(deps, auth, now);
  const rendered = await render(deps, version, resolved);
  return openInstance(deps, meta, {
    kind: 'generate',
    reminders: null,
    auth,
    templateId: tpl.id,
    version,
    recipients: [],
    resolved,
    rendered,
    review: body.review === true,
    title: (body.title ?? tpl.name).slice(0, 200) || 'Untitled document',
    message: null,
    locale: defaultLocaleOf(auth.workspace),
    expiresAt: now + DEFAULT_EXPIRY_MS,
    callbackUrl,
    now,
  });
}

/** The one transaction that writes a new instance, its document and (without review) what confirming does. */
async function openInstance(deps: TemplatesDeps, meta: ClientMeta, p: Prepared): Promise<InstanceCreated> {
  const docId = newId('doc');
  const review = p.review ? newLinkToken() : null;
  const out = await inTransaction(
    deps,
    async (tx) => {
      const instanceId = newId('tin');
      const { doc, callback } = await openDocument(deps, tx, {
        auth: p.auth,
        meta,
        document: {
          id: docId,
          title: p.title,
          message: p.message,
          locale: p.locale,
          status: p.review ? 'draft' : 'in_progress',
          signingOrder: new Set(p.recipients.map((r) => r.signing_order)).size > 1 ? 'sequential' : 'parallel',
          placement: 'template',
          fileName: p.version.file_name,
          pageCount: p.version.page_count,
          fields: recipientFields(versionFields(p.version)),
          original: { sha256: p.version.original_sha256, blob: p.version.original_blob },
          prepared: p.rendered,
          expiresAt: p.expiresAt,
          template: { id: p.templateId, version: p.version.version },
          reminders: p.reminders,
        },
        requests: [],
        callbackUrl: p.callbackUrl,
        detail: {
          sha256: p.version.original_sha256,
          template_id: p.templateId,
          template_version: p.version.version,
          instance_id: instanceId,
          kind: p.kind,
          pages: p.version.page_count,
        },
      });
      const inst: InstanceRow = {
        id: instanceId,
        workspace_id: doc.workspace_id,
        template_id: p.templateId,
        template_version: p.version.version,
        kind: p.kind,
        status: p.review ? 'staged' : 'confirmed',
        document_id: docId,
        recipients: JSON.stringify(p.recipients),
        field_values: JSON.stringify(p.resolved),
        review_token_hash: review?.hash ?? null,
        review_expires_at: review ? p.now + REVIEW_WINDOW_MS : null,
        staged_at: review ? p.now : null,
        confirmed_at: null,
        confirmed_by: null,
        discarded_at: null,
        discard_reason: null,
        created_by_key_id: p.auth.keyId,
        created_at: p.now,
        updated_at: p.now,
      };
      if (review) {
        await insertInstance(tx.trx, inst);
        const url = reviewUrl(deps.config.baseUrl, review.token);
        await tx.audit(doc, { action: 'template_instance.staged', actor: keyActor(p.auth) });
        await tx.emit('template_instance.staged', doc.workspace_id, {
          ...instanceEventFields(inst),
          review_url: url,
          review_expires_at: iso(inst.review_expires_at!),
          recipients: plainRecipients(p.recipients),
        });
        await p.within?.(tx, instanceId);
        return { inst, callback, reviewUrl: url };
      }
      const confirmed = await release(deps, tx, doc, inst, p.recipients, p.auth);
      await insertInstance(tx.trx, confirmed);
      await p.within?.(tx, instanceId);
      return { inst: confirmed, callback, reviewUrl: undefined };
    },
    p.now,
  );
  return {
    template_instance: presentInstance(out.inst, out.reviewUrl ? { url: out.reviewUrl } : undefined),
    ...(out.callback ? { callback: out.callback } : {}),
  };
}

/**
 * What confirming does, inside the document's transaction: an instantiated document gets its signing requests and
 * the first turn is invited (one `signing_request.sent`, for the first recipient released); a generated file goes
 * to the sealing job. Then `template_instance.confirmed`.
 */
export async function release(
  deps: TemplatesDeps,
  tx: Tx,
  doc: DocumentRow,
  inst: InstanceRow,
  recipients: Resolved[],
  auth: AuthContext | null,
): Promise<InstanceRow> {
  // A caller with an AuthContext (an API key, or a dashboard person: its `actor`), else the review link's holder.
  const actor = templateActor(auth);
  const out: Resolved[] = [];
  if (inst.kind === 'generate') {
    // Sealed by the sealing job like any signed PDF (no stamps; the audit page; the seal).
    await markSealPending(tx.trx, doc.id, null, tx.now);
    tx.sealAfterCommit();
  } else {
    const first = recipients[0]?.signing_order;
    const tokens: string[] = [];
    const rows: RequestRow[] = recipients.map((r, i) => {
      const { row, token } = newRequestRow(
        doc,
        {
          slot: i + 1,
          role: r.slot,
          email: r.email ?? '',
          name: r.name,
          channel: r.channel,
          phone: r.phone,
          routing_order: r.signing_order,
          ...(r.verification ? { verification: r.verification } : {}),
        },
        r.signing_order === first,
        tx.now,
      );
      tokens.push(token);
      out.push({ ...r, signing_request_id: row.id });
      return row;
    });
    await insertRequests(tx.trx, rows);
    for (const [i, r] of rows.entries()) {
      const queued = r.status === 'queued';
      await tx.audit(doc, {
        action: 'signing_request.sent',
        actor,
        signingRequestId: r.id,
        detail: { email: r.email, phone: r.phone, channel: r.channel, role: r.role, queued },
      });
      if (i === 0)
        await tx.emit('signing_request.sent', doc.workspace_id, sentEventFields(doc, r, 'template_instance'));
      if (!queued) await inviteSigner(deps, tx, doc, r, tokens[i]!, 'invitation');
    }
  }
  const by = auth ? 'api' : 'review_page';
  const confirmed: InstanceRow = {
    ...inst,
    status: 'confirmed',
    recipients: JSON.stringify(out),
    confirmed_at: tx.now,
    confirmed_by: by,
    updated_at: tx.now,
  };
  await tx.audit(doc, { action: 'template_instance.confirmed', actor, detail: { instance_id: inst.id } });
  await tx.emit('template_instance.confirmed', doc.workspace_id, {
    ...instanceEventFields(confirmed),
    actor: by,
    recipients: plainRecipients(out),
  });
  return confirmed;
}

/** Who acts on an instance: an API key (its workspace), or the holder of the review link. */
export type Reviewer = { auth: AuthContext } | { reviewToken: string };

export async function instanceFor(deps: TemplatesDeps, who: Reviewer, id?: string): Promise<InstanceRow> {
  let inst: InstanceRow | undefined;
  if ('auth' in who) inst = await findInstance(deps.db.kysely, who.auth.workspace.id, id!);
  else {
    const hash = linkTokenHash(who.reviewToken);
    inst = hash ? await findInstanceByReviewHash(deps.db.kysely, hash) : undefined;
  }
  if (!inst) throw apiError('not_found', { message: 'No such template instance.' });
  return inst;
}

export async function getInstance(deps: TemplatesDeps, auth: AuthContext, id: string) {
  return presentInstance(await instanceFor(deps, { auth }, id));
}
