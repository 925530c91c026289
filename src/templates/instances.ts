// Template instances: instantiate (a document for recipients) and generate (a finished file, no signers), sent at
// once or staged for review, then confirmed or discarded. Guarantees:
// - nothing is created when a call is refused: tier, template, version, recipients, field values, expiry, callback
//   and the monthly cap are checked, and the PDF rendered in a worker thread, before the one transaction that writes;
// - a staged instance has a `draft` document: nobody is invited and nothing is sealed until it is confirmed;
// - confirm and discard are guarded moves inside the document's transition, so of racing calls exactly one wins and
//   one event is emitted; the loser gets 409 (or 410 once the review window closed, before or after the job ran);
// - a confirm emits exactly one `signing_request.sent` (source `template_instance`) for the first recipient
//   released; later turns emit none (signing.service.ts releases them);
// - review links carry a 256-bit token; only its hash is stored.
import { iso } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { apiError, ApiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { DEFAULT_EXPIRY_MS, REVIEW_WINDOW_MS } from '../limits.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { isKnownLocale } from '../mail/locales.js';
import type { Field } from '../documents/pdf/types.js';
import type { Stamp } from '../documents/pdf/stamp.js';
import { toE164 } from '../sms/phone.js';
import { createHook } from '../webhooks/hooks.repo.js';
import { validateTargetUrl } from '../webhooks/hooks.service.js';
import { checkMonthlyCap, EMAIL, newRequestRow, resolveExpiry } from '../signing/create.js';
import {
  findDocumentById,
  insertDocument,
  insertRequests,
  moveDocument,
  workspaceNameOf,
  type DocumentRow,
  type RequestRow,
} from '../signing/signing.repo.js';
import { invalid, inviteSigner } from '../signing/signing.service.js';
import { newSignerToken, signerTokenHash } from '../signing/tokens.js';
import { inTransaction, transition, type TransitionDeps, type Tx } from '../signing/transition.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { stampKind, templateInputError, validateFieldValues } from './fields.js';
import {
  instanceEventFields,
  instanceRecipients,
  presentInstance,
  reviewUrl,
  templateActor,
  versionFields,
  versionSlots,
} from './presenters.js';
import type { InstanceKind } from './states.js';
import {
  findInstance,
  findInstanceById,
  findInstanceByReviewHash,
  insertInstance,
  moveInstance,
  dueReviewExpiries,
  findTemplateById,
  type InstanceRow,
  type VersionRow,
} from './templates.repo.js';
import {
  SENDER_SLOT,
  type GenerateBody,
  type InstanceCreated,
  type InstantiateBody,
  type RecipientIn,
  type RecipientOut,
  type TemplateFieldOut,
} from './templates.schemas.js';
import { templateOf, versionOf, type TemplatesDeps } from './templates.service.js';
import { requireFeature } from '../workspaces/features.js';

type RecipientProblem = { recipient: number; field: string; code: string; message: string };

/** `channel: "sms"` is a template channel: Enterprise only, refused before anything is looked up or created. */
function checkChannels(auth: AuthContext, recipients: readonly RecipientIn[] | undefined): void {
  if (recipients?.some((r) => r.channel === 'sms')) requireFeature(auth.workspace, 'template_channels');
}

/**
 * The recipients as they will be invited, in turn order, or every problem with them: 422 invalid_recipients
 * (meta.problems[]) and 422 missing_recipients (meta.slots) when a slot with fields has nobody.
 */
export function resolveRecipients(
  version: VersionRow,
  input: readonly RecipientIn[],
  o: { confirm: boolean },
): RecipientOut[] {
  const slots = versionSlots(version);
  const problems: RecipientProblem[] = [];
  const seenSlots = new Set<string>();
  const seenOrders = new Set<number>();
  const out: RecipientOut[] = [];
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
    if (email !== null && !EMAIL.test(email)) add('email', 'invalid_email', `${at}.email is not an e-mail address.`);
    if (channel === 'email' && email === null) add('email', 'email_required', `${at} needs an email (channel email).`);
    let phone: string | null = null;
    if (r.phone !== undefined) {
      phone = toE164(r.phone.trim());
      if (phone === null) add('phone', 'invalid_phone', `${at}.phone is not an E.164 number (like +14155550100).`);
    } else if (channel === 'sms') add('phone', 'phone_required', `${at} needs a phone number (channel sms).`);
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
    .map((f, i) => ({
      id: `f${i + 1}`,
      role: f.slot,
      type: stampKind(f.type) as Field['type'],
      page: f.page,
      ...f.box,
    }));

type Prepared = {
  kind: InstanceKind;
  auth: AuthContext;
  templateId: string;
  version: VersionRow;
  recipients: RecipientOut[];
  resolved: Record<string, string>;
  rendered: Uint8Array;
  review: boolean;
  title: string;
  message: string | null;
  locale: string;
  expiresAt: number;
  callbackUrl: string | null;
  now: number;
};

/** POST /v1/templates/{id}/instantiate. */
export async function instantiate(
  deps: TemplatesDeps,
  auth: AuthContext,
  templateId: string,
  body: InstantiateBody,
  meta: ClientMeta,
): Promise<InstanceCreated> {
  checkChannels(auth, body.recipients);
  const now = deps.clock.now();
  const tpl = await templateOf(deps, auth, templateId, { archived: false });
  const version = await versionOf(deps, tpl, body.version);
  const locale = body.locale ?? 'en';
  if (!isKnownLocale(locale)) throw invalid('locale', `Unknown locale "${locale}".`);
  const recipients = resolveRecipients(version, body.recipients, { confirm: false });
  const { resolved, problems } = validateFieldValues(versionFields(version), body.field_values);
  if (problems.length) throw templateInputError(problems);
  const expiresAt = resolveExpiry(body.expires_at, now);
  const callbackUrl = await callbackOf(deps, body.callback_url);
  await checkMonthlyCap(deps, auth, now);
  const rendered = await render(deps, version, resolved);
  return create(deps, meta, {
    kind: 'instantiate',
    auth,
    templateId: tpl.id,
    version,
    recipients,
    resolved,
    rendered,
    review: body.review === true,
    title: (body.title ?? tpl.name).slice(0, 200) || 'Untitled document',
    message: body.message ?? null,
    locale,
    expiresAt,
    callbackUrl,
    now,
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
  const now = deps.clock.now();
  const tpl = await templateOf(deps, auth, templateId, { archived: false });
  const version = await versionOf(deps, tpl, body.version);
  const { resolved, problems } = validateFieldValues(versionFields(version), body.field_values);
  if (problems.length) throw templateInputError(problems);
  const callbackUrl = await callbackOf(deps, body.callback_url);
  await checkMonthlyCap(deps, auth, now);
  const rendered = await render(deps, version, resolved);
  return create(deps, meta, {
    kind: 'generate',
    auth,
    templateId: tpl.id,
    version,
    recipients: [],
    resolved,
    rendered,
    review: body.review === true,
    title: (body.title ?? tpl.name).slice(0, 200) || 'Untitled document',
    message: null,
    locale: 'en',
    expiresAt: now + DEFAULT_EXPIRY_MS,
    callbackUrl,
    now,
  });
}

const callbackOf = async (deps: TemplatesDeps, url: string | undefined) =>
  url !== undefined ? validateTargetUrl(url, deps.config.allowPrivateNetwork) : null;

/** The one transaction that writes a new instance, its document and (without review) what confirming does. */
async function create(deps: TemplatesDeps, meta: ClientMeta, p: Prepared): Promise<InstanceCreated> {
  const docId = newId('doc');
  const review = p.review ? newSignerToken() : null;
  const out = await inTransaction(
    deps,
    async (tx) => {
      const doc: DocumentRow = {
        id: docId,
        workspace_id: p.auth.workspace.id,
        title: p.title,
        message: p.message,
        locale: p.locale,
        status: p.review ? 'draft' : 'in_progress',
        signing_order: new Set(p.recipients.map((r) => r.signing_order)).size > 1 ? 'sequential' : 'parallel',
        placement: 'template',
        file_name: p.version.file_name,
        page_count: p.version.page_count,
        fields: JSON.stringify(recipientFields(versionFields(p.version))),
        original_sha256: p.version.original_sha256,
        original_blob: p.version.original_blob,
        prepared_sha256: sha256Hex(p.rendered),
        prepared_blob: await deps.blobs.put(p.rendered, 'prepared', tx.trx),
        signed_blob: null,
        signed_sha256: null,
        cert_serial: null,
        tsa_provider: null,
        tsa_signed_at: null,
        callback_hook_id: null,
        created_by_key_id: p.auth.keyId,
        seal_state: 'none',
        seal_claimed_by: null,
        seal_claim_expires_at: null,
        seal_attempts: 0,
        seal_last_error: null,
        final_request_id: null,
        expires_at: p.expiresAt,
        created_at: p.now,
        updated_at: p.now,
        completed_at: null,
        closed_at: null,
        template_id: p.templateId,
        template_version: p.version.version,
      };
      let callback: { hook_id: string; secret: string } | undefined;
      if (p.callbackUrl) {
        const hook = await createHook(
          tx.trx,
          {
            workspaceId: doc.workspace_id,
            targetUrl: p.callbackUrl,
            events: [],
            documentId: docId,
            source: 'callback',
          },
          p.now,
        );
        doc.callback_hook_id = hook.id;
        callback = { hook_id: hook.id, secret: hook.secret };
      }
      await insertDocument(tx.trx, doc, []);
      const inst: InstanceRow = {
        id: newId('tin'),
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
      await tx.audit(doc, {
        action: 'document.created',
        actor: `api_key:${p.auth.keyId}`,
        ip: meta.ip,
        userAgent: meta.userAgent,
        detail: {
          sha256: doc.original_sha256,
          template_id: p.templateId,
          template_version: p.version.version,
          instance_id: inst.id,
          kind: p.kind,
          pages: doc.page_count,
        },
      });
      if (review) {
        await insertInstance(tx.trx, inst);
        const url = reviewUrl(deps.config.baseUrl, review.token);
        await tx.audit(doc, { action: 'template_instance.staged', actor: `api_key:${p.auth.keyId}` });
        await tx.emit('template_instance.staged', doc.workspace_id, {
          ...instanceEventFields(inst),
          review_url: url,
          review_expires_at: iso(inst.review_expires_at!),
          recipients: p.recipients,
        });
        return { inst, callback, reviewUrl: url };
      }
      const confirmed = await release(deps, tx, doc, inst, p.recipients, p.auth.keyId);
      await insertInstance(tx.trx, confirmed);
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
async function release(
  deps: TemplatesDeps,
  tx: Tx,
  doc: DocumentRow,
  inst: InstanceRow,
  recipients: RecipientOut[],
  keyId: string | null,
): Promise<InstanceRow> {
  const actor = templateActor(keyId);
  const out: RecipientOut[] = [];
  if (inst.kind === 'generate') {
    await sealWhenConfirmed(tx, doc);
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
        await tx.emit('signing_request.sent', doc.workspace_id, {
          signing_request_id: r.id,
          document_id: doc.id,
          signer: { email: r.email, role: r.role, name: r.name, slot: r.slot },
          locale: doc.locale,
          source: 'template_instance',
        });
      if (!queued) await inviteSigner(deps, tx, doc, r, tokens[i]!, 'invitation');
    }
  }
  const by = keyId ? 'api' : 'review_page';
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
    recipients: out,
  });
  return confirmed;
}

/** A generated file is sealed by the sealing job, like any signed PDF (stamps: none; audit page; seal). */
async function sealWhenConfirmed(tx: Tx, doc: DocumentRow): Promise<void> {
  await tx.trx
    .updateTable('documents')
    .set({ seal_state: 'pending', updated_at: tx.now })
    .where('id', '=', doc.id)
    .where('seal_state', '=', 'none')
    .execute();
  tx.sealAfterCommit();
}

// ── Review: confirm, discard, expiry ─────────────────────────────────────────────────────────────────────────────

/** Who acts on a staged instance: an API key (its workspace), or the holder of the review link. */
export type Reviewer = { auth: AuthContext } | { reviewToken: string };

async function instanceFor(deps: TemplatesDeps, who: Reviewer, id?: string): Promise<InstanceRow> {
  let inst: InstanceRow | undefined;
  if ('auth' in who) inst = await findInstance(deps.db.kysely, who.auth.workspace.id, id!);
  else {
    const hash = signerTokenHash(who.reviewToken);
    inst = hash ? await findInstanceByReviewHash(deps.db.kysely, hash) : undefined;
  }
  if (!inst) throw apiError('not_found', { message: 'No such template instance.' });
  return inst;
}

/** Why a confirm or discard cannot proceed, or nothing when the instance is staged and its window still open. */
export function stateError(inst: InstanceRow, now: number): ApiError | null {
  if (inst.status === 'confirmed') return apiError(inst.staged_at === null ? 'not_staged' : 'already_confirmed');
  if (inst.status === 'discarded')
    return inst.discard_reason === 'expired' ? apiError('review_expired') : apiError('discarded');
  if (inst.review_expires_at !== null && inst.review_expires_at <= now) return apiError('review_expired');
  return null;
}

/** The instance re-read with its document locked: the one the move will see. */
async function lockedStaged(tx: Tx, id: string): Promise<InstanceRow> {
  const cur = (await findInstanceById(tx.trx, id))!;
  const err = stateError(cur, tx.now);
  if (err) throw err;
  return cur;
}

export async function getInstance(deps: TemplatesDeps, auth: AuthContext, id: string) {
  return presentInstance(await instanceFor(deps, { auth }, id));
}

/**
 * Confirm: the staged file is checked once more in a worker thread (a file that cannot be rendered is 502
 * render_failed and nothing is sent), then, in the document's transaction, the guarded move, the invitations (or the
 * seal) and `template_instance.confirmed`. Replacement recipients are validated exactly as at instantiate.
 */
export async function confirmInstance(
  deps: TemplatesDeps,
  who: Reviewer,
  id: string | undefined,
  replacement?: readonly RecipientIn[],
) {
  const found = await instanceFor(deps, who, id);
  const early = stateError(found, deps.clock.now());
  if (early) throw early;
  let recipients = instanceRecipients(found);
  if (replacement !== undefined) {
    if (found.kind === 'generate') throw invalid('recipients', 'A generated file has no recipients.');
    if ('auth' in who) checkChannels(who.auth, replacement);
    const tpl = await findTemplateAny(deps, found);
    recipients = resolveRecipients(await versionOf(deps, tpl, found.template_version), replacement, { confirm: true });
  }
  const doc0 = await findDocumentById(deps.db.kysely, found.document_id);
  try {
    await deps.pdf.inspect(await deps.blobs.get(doc0!.prepared_blob));
  } catch {
    throw apiError('render_failed', { message: 'The staged PDF could not be rendered; nothing was sent.' });
  }
  const keyId = 'auth' in who ? who.auth.keyId : null;
  const confirmed = await transition(deps, found.document_id, async (tx, doc) => {
    const cur = await lockedStaged(tx, found.id);
    if (doc!.expires_at <= tx.now)
      throw invalid('expires_at', 'The expiry given at instantiate has passed; instantiate again.');
    if (!(await moveDocument(tx.trx, doc!.id, 'send', { updated_at: tx.now }))) throw apiError('not_staged');
    const next = await release(deps, tx, doc!, cur, recipients, keyId);
    const { status: _s, id: _i, ...patch } = next;
    if (!(await moveInstance(tx.trx, cur.id, 'confirm', patch)))
      throw stateError(cur, tx.now) ?? apiError('not_staged');
    return next;
  });
  return presentInstance(confirmed);
}

/** Discard by hand: `template_instance.discarded` with reason `discarded`; the draft document is discarded too. */
export async function discardInstance(deps: TemplatesDeps, who: Reviewer, id?: string) {
  const found = await instanceFor(deps, who, id);
  const early = stateError(found, deps.clock.now());
  if (early) throw early;
  const actor = 'auth' in who ? `api_key:${who.auth.keyId}` : 'review_page';
  const out = await transition(deps, found.document_id, async (tx) => {
    const cur = await lockedStaged(tx, found.id);
    return discard(tx, cur, 'discarded', actor);
  });
  return presentInstance(out!);
}

async function discard(tx: Tx, cur: InstanceRow, reason: 'discarded' | 'expired', actor: string) {
  const patch = { discarded_at: tx.now, discard_reason: reason, updated_at: tx.now };
  if (!(await moveInstance(tx.trx, cur.id, reason === 'expired' ? 'expire' : 'discard', patch))) return null;
  const doc = { id: cur.document_id, workspace_id: cur.workspace_id };
  await moveDocument(tx.trx, cur.document_id, 'discard', { closed_at: tx.now, updated_at: tx.now });
  await tx.audit(doc, { action: 'template_instance.discarded', actor, detail: { instance_id: cur.id, reason } });
  await tx.emit('template_instance.discarded', cur.workspace_id, { ...instanceEventFields(cur), reason });
  return { ...cur, ...patch, status: 'discarded' as const };
}

/**
 * The `expire-reviews` job: every staged instance past its review window is discarded with reason `expired` (one
 * event each). A confirm or discard arriving first already answers 410 (stateError), so the job only tidies up.
 */
export function expireReviewsJob(deps: TransitionDeps): ScheduledJob {
  return {
    everyMs: 3600_000,
    async run(): Promise<Record<string, unknown>> {
      let expired = 0;
      for (;;) {
        const due = await dueReviewExpiries(deps.db.kysely, deps.clock.now(), 100);
        if (due.length === 0) break;
        for (const d of due) {
          const done = await transition(deps, d.document_id, async (tx) => {
            const cur = await findInstanceById(tx.trx, d.id);
            if (!cur || cur.status !== 'staged' || (cur.review_expires_at ?? Infinity) > tx.now) return false;
            return (await discard(tx, cur, 'expired', 'system')) !== null;
          });
          if (done) expired++;
        }
        if (due.length < 100) break;
      }
      return { expired };
    },
  };
}

const findTemplateAny = async (deps: TemplatesDeps, inst: InstanceRow) =>
  (await findTemplateById(deps.db.kysely, inst.template_id))!;

// ── The review page's reads ──────────────────────────────────────────────────────────────────────────────────────

/** What the review page shows: the state, the rendered document's facts, the sender's values and the recipients. */
export async function reviewView(deps: TemplatesDeps, token: string) {
  const inst = await instanceFor(deps, { reviewToken: token });
  const doc = (await findDocumentById(deps.db.kysely, inst.document_id))!;
  const tpl = (await findTemplateById(deps.db.kysely, inst.template_id))!;
  const version = await versionOf(deps, tpl, inst.template_version);
  const resolved = JSON.parse(inst.field_values) as Record<string, string>;
  const values = versionFields(version)
    .filter((f) => f.slot === SENDER_SLOT)
    .map((f) => ({ key: f.key, label: f.label ?? f.key, type: f.type, value: resolved[f.key] ?? '' }));
  const err = stateError(inst, deps.clock.now());
  const state = !err ? 'staged' : err.name_ === 'review_expired' ? 'expired' : inst.status;
  const workspaceName = (await workspaceNameOf(deps.db.kysely, inst.workspace_id)) ?? '';
  return {
    state,
    instance: inst,
    document: doc,
    templateName: tpl.name,
    workspaceName,
    values,
    recipients: instanceRecipients(inst),
  };
}

/** The rendered PDF under review (the document's file with the sender's values stamped). */
export async function reviewPdf(deps: TemplatesDeps, token: string): Promise<Uint8Array> {
  const inst = await instanceFor(deps, { reviewToken: token });
  const doc = (await findDocumentById(deps.db.kysely, inst.document_id))!;
  return deps.blobs.get(doc.prepared_blob);
}
