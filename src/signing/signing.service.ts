// The signing state changes after creation (create.ts), each a few lines on `transition` (transition.ts): a signer
// views, signs or declines through their link; the sender withdraws or reminds (sender.service.ts). Guarantees, besides
// those of `transition` and the moves table (states.ts): signer links are never returned by the API; a reminder or a
// sequential release mails a fresh link and invalidates the old one (only hashes are kept).
import type { Keyring } from '../lib/secret-box.js';
import type { Config } from '../config.js';
import type { BlobStore } from '../documents/blob-store.js';
import type { FileFetcher } from '../documents/fetch-file.js';
import type { Field } from '../documents/pdf/types.js';
import type { PdfEngine } from '../documents/pdf/engine.js';
import type { ClientMeta } from '../http/request-context.js';
import { apiError } from '../lib/errors.js';
import type { Locale } from '../i18n/i18n.js';
import type { OutgoingMail } from '../mail/outbox.js';
import { eventSigner, signerActor } from './presenters.js';
import type { SignBody } from './signer.schemas.js';
import {
  findDocument,
  findRequest,
  findRequestByTokenHash,
  listRequests,
  markSealPending,
  moveDocument,
  moveDocumentRequests,
  moveRequest,
  setSignerToken,
  type DocumentRow,
  type RequestRow,
} from './signing.repo.js';
import { releaseColumns } from './reminder-policy.js';
import { brandOf } from '../workspaces/brand.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import { isOpenRequest } from './states.js';
import { linkTokenHash, newLinkToken } from '../lib/tokens.js';
import { transition, type TransitionDeps, type Tx } from './transition.js';
import { assertVerified } from './verification.js';
import { checkSignInput, drawnSignature, invalid, type SignInput } from './sign-input.js';

export { BASE64, invalid } from './sign-input.js';

export type SigningDeps = TransitionDeps & {
  blobs: BlobStore;
  pdf: PdfEngine;
  files: FileFetcher;
  config: Pick<Config, 'baseUrl' | 'tierCaps' | 'allowPrivateNetwork' | 'qes' | 'reviewStaging'>;
  /** The qualified provider's name for the signer page; null without one. */
  qesProvider?: string | null;
  /** Secrets at rest (a callback's hook secret); without it they are stored plain. */
  keyring?: Keyring | null;
};

const userAgentOf = (meta: ClientMeta) => meta.userAgent?.slice(0, 512) ?? null;
/** Audit detail naming the embed session a signer acted through, if any. */
const via = (meta: ClientMeta) => (meta.embedded ? { embedded_session: meta.embedded } : {});

/** The messages that carry a signer's link: the invitation, a reminder, the expiry warning. */
export type SignerMailKind = 'invitation' | 'reminder' | 'expiry_warning';

/** The invitation (or reminder, or expiry warning) carrying a signer's link; the token exists only in this message. */
export function invitationMessage(
  doc: DocumentRow,
  r: RequestRow,
  token: string,
  template: SignerMailKind,
  baseUrl: string,
): OutgoingMail {
  return {
    workspaceId: doc.workspace_id,
    documentId: doc.id,
    signingRequestId: r.id,
    to: { email: r.email, name: r.name },
    locale: doc.locale as Locale,
    template,
    vars: {
      documentTitle: doc.title,
      signerName: r.name,
      message: doc.message,
      baseUrl,
      token,
      expiresAt: r.expires_at,
    },
  };
}

/**
 * Sends a signer their link by the request's channel: e-mail, or a text message for template recipients who chose
 * SMS (their phone was validated as E.164 when they were named).
 */
export async function inviteSigner(
  deps: Pick<SigningDeps, 'config'>,
  tx: Tx,
  doc: DocumentRow,
  r: RequestRow,
  token: string,
  template: SignerMailKind,
): Promise<void> {
  if (r.channel === 'sms' && r.phone) {
    await tx.sms({
      workspaceId: doc.workspace_id,
      documentId: doc.id,
      signingRequestId: r.id,
      to: r.phone,
      locale: doc.locale as Locale,
      template,
      vars: {
        documentTitle: doc.title,
        signerName: r.name,
        url: `${deps.config.baseUrl}/sign/${token}`,
        expiresAt: r.expires_at,
      },
    });
  } else {
    await tx.mail(invitationMessage(doc, r, token, template, deps.config.baseUrl));
  }
}

/** A notice (declined, completed) goes to signers who gave an e-mail address; SMS-only recipients have none. */
export const hasEmail = (r: RequestRow): boolean => r.email !== '';

/** The signing request an e-mail link's token opens; 404 for anything else. */
export async function requestByToken(deps: Pick<SigningDeps, 'db'>, token: string): Promise<RequestRow> {
  const hash = linkTokenHash(token);
  const r = hash ? await findRequestByTokenHash(deps.db.kysely, hash) : undefined;
  if (!r) throw apiError('not_found', { message: 'This signing link is not valid.' });
  return r;
}

/**
 * Where a signer stands: `open` (may act), or why not. `meta.state` of a 409 carries it, so a page whose answer was
 * lost learns that its signature did commit (`signed`) instead of showing a failure.
 */
export type SignerState = 'open' | 'queued' | 'signed' | 'declined' | 'withdrawn' | 'expired' | 'closed';

export function signerState(doc: DocumentRow | undefined, r: RequestRow, now: number): SignerState {
  if (r.status === 'pending' || r.status === 'viewed') {
    if (r.expires_at <= now) return 'expired';
    return doc && doc.status === 'in_progress' && doc.seal_state === 'none' ? 'open' : 'closed';
  }
  return r.status as SignerState;
}

/** A signer may act only on an open request of an in-progress document that is not sealing, before its expiry. */
export function assertSignable(doc: DocumentRow | undefined, r: RequestRow, now: number): asserts doc is DocumentRow {
  const state = signerState(doc, r, now);
  if (state === 'open') return;
  throw apiError('request_not_signable', {
    message: state === 'expired' ? 'This signing request has expired.' : undefined,
    meta: { state },
  });
}

/** The request re-read inside the transaction, with the document locked. */
export const reread = async (tx: Tx, r: RequestRow) => (await findRequest(tx.trx, r.workspace_id, r.id))!;

/** What the signing page needs: the request, its document and the signer's own fields. */
export async function signerView(deps: Pick<SigningDeps, 'db' | 'clock'>, r: RequestRow) {
  const doc = (await findDocument(deps.db.kysely, r.workspace_id, r.document_id))!;
  // The row the page already read for the sender's name, brand columns included: no extra query for the brand.
  const ws = await findWorkspace(deps.db.kysely, r.workspace_id);
  const workspaceName = ws?.name ?? '';
  const brand = ws ? brandOf(ws) : null;
  const fields = (JSON.parse(doc.fields) as Field[]).filter((f) => f.role === r.role);
  return { request: r, document: doc, workspaceName, brand, fields, state: signerState(doc, r, deps.clock.now()) };
}

/** Whether the signer page offers the sealed PDF: everyone signed and the seal is stored. */
export const offersSealed = (doc: DocumentRow): doc is DocumentRow & { signed_blob: string } =>
  doc.status === 'completed' && doc.signed_blob !== null;

/** The file the signer sees: the prepared PDF while signing, the sealed one (as stored) once completed. */
export async function signerPdf(deps: SigningDeps, r: RequestRow): Promise<Uint8Array> {
  if (r.status === 'queued') throw apiError('request_not_signable', { meta: { state: 'queued' } });
  assertVerified(r);
  const doc = (await findDocument(deps.db.kysely, r.workspace_id, r.document_id))!;
  // A qualified document is shown as it stands: with the values and signatures of the signers before.
  return deps.blobs.get(offersSealed(doc) ? doc.signed_blob : (doc.qes_blob ?? doc.prepared_blob));
}

/** The page rendered: pending → viewed, `signing_request.viewed` once; viewing again changes nothing. */
export async function viewRequest(deps: SigningDeps, found: RequestRow, meta: ClientMeta) {
  await transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    assertVerified(r);
    if (r.status === 'viewed') return;
    if (
      !(await moveRequest(tx.trx, r.id, 'view', {
        viewed_at: tx.now,
        view_ip: meta.ip,
        view_ua: userAgentOf(meta),
        updated_at: tx.now,
      }))
    )
      return;
    await tx.audit(doc, {
      action: 'signing_request.viewed',
      actor: signerActor(r),
      signingRequestId: r.id,
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: meta.embedded ? via(meta) : null,
    });
    await tx.emit('signing_request.viewed', doc.workspace_id, {
      signing_request_id: r.id,
      document_id: doc.id,
      signer: eventSigner(r),
    });
  });
  return { status: 'viewed' };
}

/** The sign event's record of what the signer filled in: each field's id, label (if any) and value. */
function auditedValues(fields: Field[], values: Record<string, string | number | boolean>) {
  const list = fields
    .filter((f) => Object.hasOwn(values, f.id))
    .map((f) => ({ id: f.id, ...(f.rules?.label ? { label: f.rules.label } : {}), value: values[f.id] }));
  return list.length ? { fields: list } : {};
}

/**
 * A signature: `signing_request.signed`. The last one sends the document to sealing (completion and its event come
 * from sealing.ts); in sequential mode any other releases the next signer.
 */
export async function signRequest(deps: SigningDeps, found: RequestRow, body: SignBody, meta: ClientMeta) {
  const png = drawnSignature(body);
  await transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    assertVerified(r);
    if (doc.signature_level === 'qes')
      throw apiError('request_not_signable', {
        message: 'This document asks for a qualified signature: sign through your provider from the signing page.',
        meta: { state: 'open' },
      });
    await commitSignature(deps, tx, doc, r, checkSignInput(doc, r, body, png), meta);
  });
  return { status: 'signed' };
}

/**
 * Records a signature in the caller's transaction (document locked, request open and verified): the request signed
 * with its inputs, its audit entry and event, then sealing or the next turn. `qes`: the qualified signature's record
 * (qes/), written on the request and named in the audit entry.
 */
export async function commitSignature(
  deps: SigningDeps,
  tx: Tx,
  doc: DocumentRow,
  r: RequestRow,
  input: SignInput,
  meta: ClientMeta,
  qes?: Record<string, unknown>,
): Promise<void> {
  const fields = (JSON.parse(doc.fields) as Field[]).filter((f) => f.role === r.role);
  const blob = input.png ? await deps.blobs.put(input.png, 'signature', tx.trx) : null;
  const signed = await moveRequest(tx.trx, r.id, 'sign', {
    signed_at: tx.now,
    sign_ip: meta.ip,
    sign_ua: userAgentOf(meta),
    signature_kind: input.signature.type,
    signature_text: input.signature.type === 'typed' ? input.signature.text.trim() : null,
    signature_blob: blob,
    field_values: JSON.stringify(input.values),
    ...(qes ? { qes: JSON.stringify(qes) } : {}),
    updated_at: tx.now,
  });
  if (!signed) throw apiError('request_not_signable');
  const detail = {
    signature: input.signature.type,
    sha256: doc.prepared_sha256,
    ...(qes ? { level: 'qes' } : {}),
    ...auditedValues(fields, input.values),
    ...via(meta),
  };
  await tx.audit(doc, {
    action: 'signing_request.signed',
    actor: signerActor(r),
    signingRequestId: r.id,
    ip: meta.ip,
    userAgent: meta.userAgent,
    detail,
  });
  await tx.emit('signing_request.signed', doc.workspace_id, {
    signing_request_id: r.id,
    document_id: doc.id,
    signer: eventSigner(r),
    sha256: doc.prepared_sha256,
  });

  const all = await listRequests(tx.trx, doc.id);
  if (all.every((x) => x.status === 'signed')) {
    await markSealPending(tx.trx, doc.id, r.id, tx.now);
    await tx.audit(doc, { action: 'document.all_signed', actor: 'system' });
    tx.sealAfterCommit();
  } else if (doc.signing_order === 'sequential') {
    await releaseNext(deps, tx, doc, all);
  }
}

/**
 * Sequential mode: once nobody in the current turn is still open, the next turn's queued signers (the lowest
 * routing order; one signer per turn unless a template gave several the same order) become pending and get their
 * invitation; no new `sent` event.
 */
async function releaseNext(deps: SigningDeps, tx: Tx, doc: DocumentRow, all: RequestRow[]) {
  if (all.some((x) => isOpenRequest(x.status))) return;
  const queued = all.filter((x) => x.status === 'queued');
  if (queued.length === 0) return;
  const turn = Math.min(...queued.map(routingOrder));
  for (const next of queued.filter((x) => routingOrder(x) === turn)) {
    const released = await moveRequest(tx.trx, next.id, 'release', {
      released_at: tx.now,
      sent_at: tx.now,
      updated_at: tx.now,
      ...releaseColumns(doc, tx.now, next.expires_at),
    });
    if (!released) continue;
    // A fresh link replaces the one minted at creation, which was never sent.
    const tk = newLinkToken();
    await setSignerToken(tx.trx, next.id, tk.hash);
    await tx.audit(doc, { action: 'signing_request.released', actor: 'system', signingRequestId: next.id });
    await inviteSigner(deps, tx, doc, next, tk.token, 'invitation');
  }
}

/** A request's turn in sequential mode: its template routing order, else its position. */
export const routingOrder = (r: Pick<RequestRow, 'routing_order' | 'slot'>): number => r.routing_order ?? r.slot;

/** A refusal: `signing_request.declined`; the document is declined and its other open requests withdrawn. */
export async function declineRequest(deps: SigningDeps, found: RequestRow, reason: string, meta: ClientMeta) {
  const text = reason.trim();
  if (text === '') throw invalid('reason', 'Give a reason for declining.');
  await transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    assertVerified(r);
    const declined = {
      declined_at: tx.now,
      decline_reason: text,
      sign_ip: meta.ip,
      sign_ua: userAgentOf(meta),
      updated_at: tx.now,
    };
    if (!(await moveRequest(tx.trx, r.id, 'decline', declined))) throw apiError('request_not_signable');
    await moveDocument(tx.trx, doc.id, 'decline', { closed_at: tx.now, updated_at: tx.now });
    const others = (await listRequests(tx.trx, doc.id)).filter((x) => x.id !== r.id && isOpenRequest(x.status));
    await moveDocumentRequests(tx.trx, doc.id, 'withdraw', { closed_at: tx.now, updated_at: tx.now });
    await tx.audit(doc, {
      action: 'signing_request.declined',
      actor: signerActor(r),
      signingRequestId: r.id,
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: { reason: text, ...via(meta) },
    });
    await tx.audit(doc, { action: 'document.declined', actor: 'system' });
    await tx.emit('signing_request.declined', doc.workspace_id, {
      signing_request_id: r.id,
      document_id: doc.id,
      signer: eventSigner(r),
      reason: text,
    });
    for (const o of others.filter(hasEmail)) {
      await tx.mail({
        workspaceId: doc.workspace_id,
        documentId: doc.id,
        signingRequestId: o.id,
        to: { email: o.email, name: o.name },
        locale: doc.locale as Locale,
        template: 'declined',
        vars: { documentTitle: doc.title, signerName: o.name, declinedByName: r.name },
      });
    }
  });
  return { status: 'declined' };
}
