// One way to open a document, for every caller that opens one (the signing-request API in create.ts, template
// instances in templates/). Guarantees:
// - a new document's row is built only here, every column not chosen by the caller at its default (nothing signed,
//   nothing sealed); the template columns are written only for a template's document, so code outside templates/
//   never writes them (the rolling-upgrade rule of migration 005);
// - `openDocument` writes the document, its signing requests, the callback hook (when a callback URL is given) and
//   the `document.created` audit entry in the caller's transaction, so all of them commit or none;
// - what the callers check before that transaction (expiry, callback URL, monthly cap) is written once here too.
import type { Field } from '../documents/pdf/types.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { sha256Hex } from '../lib/crypto.js';
import { newLinkToken } from '../lib/tokens.js';
import { DEFAULT_EXPIRY_MS, MAX_EXPIRY_MS } from '../limits.js';
import { createHook } from '../webhooks/hooks.repo.js';
import { workspaceReminderDefault } from '../workspaces/workspaces.repo.js';
import { defaultLocaleOf } from '../workspaces/locale.js';
import { isKnownLocale, type Locale } from '../i18n/i18n.js';
import { policyColumns, releaseColumns, type Reminders } from './reminder-policy.js';
import { remindersReady } from './reminders.js';
import { validateTargetUrl } from '../webhooks/hooks.service.js';
import { keyActor } from './presenters.js';
import { countDocumentsSince, insertDocument, type DocumentRow, type RequestRow } from './signing.repo.js';
import type { CallbackOut } from './signing.schemas.js';
import { invalid, type SigningDeps } from './signing.service.js';
import type { Tx } from './transition.js';

/** What the caller decides about a new document; every other column starts at its default. */
export type NewDocument = {
  id: string;
  title: string;
  message: string | null;
  locale: string;
  /** `draft` for a template instance staged for review: nobody is invited until it is confirmed. */
  status: 'in_progress' | 'draft';
  signingOrder: 'parallel' | 'sequential';
  placement: string;
  fileName: string;
  pageCount: number;
  /** Where each signer signs: the signer page's boxes, and what sealing stamps. */
  fields: Field[];
  /** The file as given: stored now, or a template version's original, already stored. */
  original: { sha256: string } & ({ bytes: Uint8Array } | { blob: string });
  /** The file signers see (placed, or rendered from a template). */
  prepared: Uint8Array;
  expiresAt: number;
  template?: { id: string; version: number };
  /** Automatic reminders (resolveReminders); none when absent. */
  reminders?: Reminders;
  /** `qes`: every signer signs through the qualified provider (qes/); absent: simple signatures. */
  signatureLevel?: 'qes';
};

function documentRow(
  auth: AuthContext,
  d: NewDocument,
  blobs: { original: string; prepared: string },
  now: number,
): DocumentRow {
  return {
    id: d.id,
    workspace_id: auth.workspace.id,
    title: d.title,
    message: d.message,
    locale: d.locale,
    status: d.status,
    signing_order: d.signingOrder,
    placement: d.placement,
    file_name: d.fileName,
    page_count: d.pageCount,
    fields: JSON.stringify(d.fields),
    original_sha256: d.original.sha256,
    original_blob: blobs.original,
    prepared_sha256: sha256Hex(d.prepared),
    prepared_blob: blobs.prepared,
    signed_blob: null,
    signed_sha256: null,
    cert_serial: null,
    tsa_provider: null,
    tsa_signed_at: null,
    callback_hook_id: null,
    created_by_key_id: auth.keyId,
    seal_state: 'none',
    seal_claimed_by: null,
    seal_claim_expires_at: null,
    seal_attempts: 0,
    seal_last_error: null,
    final_request_id: null,
    expires_at: d.expiresAt,
    created_at: now,
    updated_at: now,
    completed_at: null,
    closed_at: null,
    ...(d.template ? { template_id: d.template.id, template_version: d.template.version } : {}),
    ...policyColumns(d.reminders ?? null),
    ...(d.signatureLevel ? { signature_level: d.signatureLevel } : {}),
  };
}

/**
 * Writes a new document in the caller's transaction: its files, its row, its `requests` (a template instance writes
 * none here: its requests come when it is confirmed), the callback hook, and `document.created` with `detail` (each
 * caller's own, hashed into the audit chain as given).
 */
export async function openDocument(
  deps: Pick<SigningDeps, 'blobs' | 'keyring'>,
  tx: Tx,
  o: {
    auth: AuthContext;
    meta: ClientMeta;
    document: NewDocument;
    requests: RequestRow[];
    callbackUrl: string | null;
    detail: Record<string, unknown>;
  },
): Promise<{ doc: DocumentRow; callback?: CallbackOut }> {
  const d = o.document;
  const original = 'blob' in d.original ? d.original.blob : await deps.blobs.put(d.original.bytes, 'original', tx.trx);
  const prepared = await deps.blobs.put(d.prepared, 'prepared', tx.trx);
  const doc = documentRow(o.auth, d, { original, prepared }, tx.now);
  let callback: CallbackOut | undefined;
  if (o.callbackUrl) {
    const hook = await createHook(
      tx.trx,
      { workspaceId: doc.workspace_id, targetUrl: o.callbackUrl, events: [], documentId: doc.id, source: 'callback' },
      tx.now,
      deps.keyring,
    );
    doc.callback_hook_id = hook.id;
    callback = { hook_id: hook.id, secret: hook.secret };
  }
  await insertDocument(tx.trx, doc, o.requests);
  await tx.audit(doc, {
    action: 'document.created',
    actor: keyActor(o.auth),
    ip: o.meta.ip,
    userAgent: o.meta.userAgent,
    detail: o.detail,
  });
  return { doc, callback };
}

/**
 * A new signing request of `doc` with a fresh link (the token is returned once, for the invitation; only its hash is
 * kept). `released`: invited now (pending), or waiting for its turn (queued).
 */
export function newRequestRow(
  doc: Pick<DocumentRow, 'id' | 'workspace_id' | 'expires_at'> &
    Partial<Pick<DocumentRow, 'reminder_after_days' | 'reminder_every_days'>>,
  signer: Pick<RequestRow, 'slot' | 'role' | 'email' | 'name'> &
    Partial<Pick<RequestRow, 'channel' | 'phone' | 'routing_order' | 'verification'>>,
  released: boolean,
  now: number,
): { row: RequestRow; token: string } {
  const tk = newLinkToken();
  const row: RequestRow = {
    id: newId('sr'),
    document_id: doc.id,
    workspace_id: doc.workspace_id,
    ...signer,
    status: released ? 'pending' : 'queued',
    token_hash: tk.hash,
    expires_at: doc.expires_at,
    sent_at: released ? now : null,
    released_at: released ? now : null,
    viewed_at: null,
    signed_at: null,
    declined_at: null,
    decline_reason: null,
    closed_at: null,
    signature_kind: null,
    signature_text: null,
    signature_blob: null,
    field_values: null,
    view_ip: null,
    view_ua: null,
    sign_ip: null,
    sign_ua: null,
    reminded_at: null,
    created_at: now,
    updated_at: now,
    ...(released ? releaseColumns(doc, now, doc.expires_at) : {}),
  };
  return { row, token: tk.token };
}

/**
 * A new document's automatic reminders: as given (`null`: none), or, when not given, the workspace's default as it
 * is now (a later change of the default leaves existing documents alone). A policy needs migration 012: before it
 * has run, asking for one is 503 service_unavailable (retry), and the default reads as none.
 */
export async function resolveReminders(
  deps: Pick<SigningDeps, 'db'>,
  workspaceId: string,
  given: Reminders | undefined,
): Promise<Reminders> {
  if (given === null) return null;
  if (given === undefined) return workspaceReminderDefault(deps.db.kysely, workspaceId);
  if (!(await remindersReady(deps.db)))
    throw apiError('service_unavailable', {
      message: 'Reminders wait for a deployment update; retry.',
      headers: { 'Retry-After': '30' },
    });
  return given;
}

/**
 * The document's language: `locale` as given (a known tag exactly, else 400 invalid_request; never replaced), or,
 * when not given, the workspace's default (workspaces/locale.ts; English without one).
 */
export function resolveLocale(given: string | undefined, auth: Pick<AuthContext, 'workspace'>): Locale {
  const locale = given ?? defaultLocaleOf(auth.workspace);
  if (!isKnownLocale(locale)) throw invalid('locale', `Unknown locale "${locale}".`);
  return locale;
}

/** The document's expiry: `expires_at` as given (future, at most 365 days ahead), or the default 30 days. */
export function resolveExpiry(raw: string | undefined, now: number): number {
  if (raw === undefined) return now + DEFAULT_EXPIRY_MS;
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d\d-\d\dT/.test(raw) || Number.isNaN(ms))
    throw invalid('expires_at', 'expires_at must be an ISO 8601 timestamp.');
  if (ms <= now) throw invalid('expires_at', 'expires_at must be in the future.');
  if (ms > now + MAX_EXPIRY_MS) throw invalid('expires_at', 'expires_at must be at most 365 days ahead.');
  return ms;
}

/** A `callback_url` checked under the outbound rule (as a hook's target), or null when none is given. */
export const callbackUrlOf = async (deps: Pick<SigningDeps, 'config'>, url: string | undefined) =>
  url !== undefined ? validateTargetUrl(url, deps.config.allowPrivateNetwork) : null;

/** First instant of the current calendar month, UTC: the window of the monthly document cap. */
export const monthStart = (now: number): number => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};

/** 402 tier_required once the workspace's plan has opened its documents for this month. */
export async function checkMonthlyCap(
  deps: Pick<SigningDeps, 'db' | 'config'>,
  auth: AuthContext,
  now: number,
): Promise<void> {
  const tier = auth.workspace.tier;
  const cap = deps.config.tierCaps[tier];
  if (cap === undefined) return;
  const used = await countDocumentsSince(deps.db.kysely, auth.workspace.id, monthStart(now));
  if (used >= cap) {
    throw apiError('tier_required', {
      message: `The ${tier} plan allows ${cap} documents a month; this month's are used up.`,
      meta: { tier, cap, used },
    });
  }
}
