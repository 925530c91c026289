// The signing state machine. Guarantees:
// - Every transition is one transaction that locks the document row, changes state with a guarded update, appends
//   to the audit chain, writes its webhook events to the outbox and its e-mails to the mail outbox; so an event is
//   emitted exactly when its transition commits, and never twice (a losing racer's guarded update changes nothing).
// - Nothing is created when a request is refused: validation, file fetch and PDF processing finish before the
//   transaction that writes the document.
// - Signer links are never returned by the API; they reach signers only through e-mail.
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../http/errors.js';
import type { AuthContext } from '../http/request-context.js';
import { iso, type Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { sha256Hex } from '../lib/crypto.js';
import type { BlobStore } from '../documents/blob-store.js';
import { appendAudit } from '../documents/audit.repo.js';
import {
  closeOpenRequests,
  countDocumentsSince,
  dueExpiries,
  findDocument,
  findRequest,
  findRequestByTokenHash,
  insertDocument,
  listRequests,
  lockDocument,
  transitionDocument,
  transitionRequest,
  OPEN_REQUEST_STATES,
  type DocumentRow,
  type RequestRow,
} from '../documents/documents.repo.js';
import type { FileFetcher } from '../documents/fetch-file.js';
import { createHook } from '../webhooks/hooks.repo.js';
import type { Emit } from '../webhooks/outbox.repo.js';
import { validateTargetUrl } from '../webhooks/hooks.routes.js';
import { newSignerToken, signerTokenHash } from './tokens.js';
import type { Locale } from '../mail/locales.js';
import type { OutgoingMail } from '../mail/mailer.js';
import { presentRequestBrief } from './presenters.js';
import type { MailQueue, PdfEngine, PlacementField } from './ports.js';

export const MAX_SIGNERS = 20;
export const DEFAULT_EXPIRY_MS = 30 * 24 * 3600_000;
export const MAX_EXPIRY_MS = 365 * 24 * 3600_000;
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

export type SigningDeps = {
  db: Db;
  clock: Clock;
  blobs: BlobStore;
  emit: Emit;
  mail: MailQueue;
  pdf: PdfEngine;
  files: FileFetcher;
  config: Pick<Config, 'baseUrl' | 'tierCaps' | 'allowPrivateNetwork'>;
  isKnownLocale(tag: string): boolean;
  wake: { dispatcher(): void; sealer(): void };
};

export type CreateBody = {
  signers: Array<{ role: string; email: string; name: string }>;
  file?: { name: string; content_base64: string };
  file_url?: string;
  placement: string;
  fields?: Array<{ role: string; type: string; page: number; x: number; y: number; width: number; height: number }>;
  signing_order?: 'parallel' | 'sequential';
  title?: string;
  message?: string;
  locale?: string;
  expires_at?: string;
  callback_url?: string;
};

export type ClientMeta = { ip: string | null; userAgent: string | null };

const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  apiError('invalid_request', { message, meta: { field, ...extra } });

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;

/** First instant of the current calendar month, UTC: the window of the monthly document cap. */
export const monthStart = (now: number): number => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};

export function decodeFile(file: { name: string; content_base64: string }): Uint8Array {
  const b64 = file.content_base64.replace(/\s+/g, '');
  if (b64.length === 0) throw apiError('invalid_file', { message: 'The file is empty.', meta: { field: 'file.content_base64' } });
  if (!BASE64.test(b64) || b64.length % 4 === 1) throw invalid('file.content_base64', 'file.content_base64 is not valid base64.');
  if ((b64.length * 3) / 4 > MAX_FILE_BYTES + 3) throw apiError('file_too_large', { meta: { max_bytes: MAX_FILE_BYTES } });
  const bytes = new Uint8Array(Buffer.from(b64, 'base64'));
  if (bytes.byteLength > MAX_FILE_BYTES) throw apiError('file_too_large', { meta: { max_bytes: MAX_FILE_BYTES } });
  return bytes;
}

function validateSigners(signers: CreateBody['signers']): void {
  const roles = new Set<string>();
  signers.forEach((s, i) => {
    if (!EMAIL.test(s.email)) throw invalid(`signers[${i}].email`, `signers[${i}].email is not an e-mail address.`);
    if (s.name.trim() === '') throw invalid(`signers[${i}].name`, `signers[${i}].name is empty.`);
    if (roles.has(s.role)) throw invalid(`signers[${i}].role`, `Role "${s.role}" appears twice; roles must be unique.`);
    roles.add(s.role);
  });
}

function resolveExpiry(raw: string | undefined, now: number): number {
  if (raw === undefined) return now + DEFAULT_EXPIRY_MS;
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d\d-\d\dT/.test(raw) || Number.isNaN(ms)) throw invalid('expires_at', 'expires_at must be an ISO 8601 timestamp.');
  if (ms <= now) throw invalid('expires_at', 'expires_at must be in the future.');
  if (ms > now + MAX_EXPIRY_MS) throw invalid('expires_at', 'expires_at must be at most 365 days ahead.');
  return ms;
}

const actorOfKey = (auth: AuthContext) => `api_key:${auth.keyId}`;
const signerActor = (r: RequestRow) => `signer:${r.email}`;
const signerOf = (r: RequestRow) => ({ email: r.email, name: r.name });

function invitationMessage(doc: DocumentRow, r: RequestRow, token: string, template: 'invitation' | 'reminder', baseUrl: string): OutgoingMail {
  return {
    workspaceId: doc.workspace_id,
    documentId: doc.id,
    signingRequestId: r.id,
    to: { email: r.email, name: r.name },
    locale: doc.locale as Locale,
    template,
    vars: { documentTitle: doc.title, signerName: r.name, message: doc.message, baseUrl, token, expiresAt: r.expires_at },
  };
}

export async function createSigningRequest(deps: SigningDeps, auth: AuthContext, body: CreateBody, meta: ClientMeta) {
  const { db, clock } = deps;
  if (body.placement === 'manual') throw apiError('placement_retired');
  const now = clock.now();

  validateSigners(body.signers);
  const locale = body.locale ?? 'en';
  if (!deps.isKnownLocale(locale)) throw invalid('locale', `Unknown locale "${locale}".`);
  const expiresAt = resolveExpiry(body.expires_at, now);
  const order = body.signing_order ?? 'parallel';
  if ((body.file === undefined) === (body.file_url === undefined)) {
    throw invalid('file', 'Give exactly one of file or file_url.');
  }
  if (body.placement === 'coordinates' && !body.fields?.length) throw invalid('fields', 'placement "coordinates" needs fields[].');
  if (body.placement !== 'coordinates' && body.fields !== undefined) throw invalid('fields', 'fields[] is only used with placement "coordinates".');
  const callbackUrl = body.callback_url !== undefined ? await validateTargetUrl(body.callback_url, deps.config.allowPrivateNetwork) : null;

  const tier = auth.workspace.tier;
  const cap = deps.config.tierCaps[tier];
  if (cap !== undefined) {
    const used = await countDocumentsSince(db.kysely, auth.workspace.id, monthStart(now));
    if (used >= cap) {
      throw apiError('tier_required', {
        message: `The ${tier} plan allows ${cap} documents a month; this month's are used up.`,
        meta: { tier, cap, used },
      });
    }
  }

  const original = body.file ? decodeFile(body.file) : await deps.files.fetch(body.file_url!);
  const fileName = body.file?.name ?? decodeURIComponent(new URL(body.file_url!).pathname.split('/').pop() || 'document.pdf');
  const info = await deps.pdf.inspect(original);
  const roles = body.signers.map((s) => s.role);
  const prepared = await deps.pdf.prepare(
    original,
    body.placement === 'anchors'
      ? { mode: 'anchors', roles }
      : body.placement === 'auto_append'
        ? { mode: 'auto_append', signers: body.signers }
        : { mode: 'coordinates', roles, fields: body.fields! },
  );

  const docId = newId('doc');
  const title = (body.title ?? fileName.replace(/\.pdf$/i, '')).slice(0, 200) || 'Untitled document';
  const tokens: string[] = [];
  const requests: RequestRow[] = body.signers.map((s, i) => {
    const tk = newSignerToken();
    tokens.push(tk.token);
    const released = order === 'parallel' || i === 0;
    return {
      id: newId('sr'),
      document_id: docId,
      workspace_id: auth.workspace.id,
      slot: i + 1,
      role: s.role,
      email: s.email,
      name: s.name.trim(),
      status: released ? 'pending' : 'queued',
      token_hash: tk.hash,
      expires_at: expiresAt,
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
    };
  });

  let callback: { hook_id: string; secret: string } | undefined;
  await db.kysely.transaction().execute(async (trx) => {
    const originalBlob = await deps.blobs.put(original, 'original', trx);
    const preparedBlob = await deps.blobs.put(prepared.pdf, 'prepared', trx);
    const doc: DocumentRow = {
      id: docId,
      workspace_id: auth.workspace.id,
      title,
      message: body.message ?? null,
      locale,
      status: 'in_progress',
      signing_order: order,
      placement: body.placement,
      file_name: fileName.slice(0, 255),
      page_count: prepared.pageCount,
      fields: JSON.stringify(prepared.fields),
      original_sha256: info.sha256,
      original_blob: originalBlob,
      prepared_sha256: sha256Hex(prepared.pdf),
      prepared_blob: preparedBlob,
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
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
      completed_at: null,
      closed_at: null,
    };
    if (callbackUrl) {
      const hook = await createHook(trx, { workspaceId: auth.workspace.id, targetUrl: callbackUrl, events: [], documentId: docId, source: 'callback' }, now);
      doc.callback_hook_id = hook.id;
      callback = { hook_id: hook.id, secret: hook.secret };
    }
    await insertDocument(trx, doc, requests);
    await appendAudit(
      trx,
      {
        documentId: docId,
        workspaceId: doc.workspace_id,
        action: 'document.created',
        actor: actorOfKey(auth),
        ip: meta.ip,
        userAgent: meta.userAgent,
        detail: { sha256: info.sha256, file_name: doc.file_name, pages: prepared.pageCount, placement: body.placement, signing_order: order },
      },
      now,
    );
    for (const [i, r] of requests.entries()) {
      await appendAudit(
        trx,
        { documentId: docId, workspaceId: doc.workspace_id, action: 'signing_request.sent', actor: actorOfKey(auth), signingRequestId: r.id, detail: { email: r.email, role: r.role, queued: r.status === 'queued' } },
        now,
      );
      await deps.emit(trx, 'signing_request.sent', doc.workspace_id, {
        signing_request_id: r.id,
        document_id: docId,
        signer: { email: r.email, role: r.role, name: r.name, slot: r.slot },
        locale,
        source: 'v1_api',
      });
      if (r.status === 'pending') await deps.mail.enqueue(trx, invitationMessage(doc, r, tokens[i]!, 'invitation', deps.config.baseUrl));
    }
  });
  deps.mail.wake();
  deps.wake.dispatcher();

  return {
    document_id: docId,
    status: 'in_progress',
    signing_order: order,
    expires_at: iso(expiresAt),
    signing_requests: requests.map(presentRequestBrief),
    ...(callback ? { callback } : {}),
  };
}

async function openRequestByToken(deps: SigningDeps, token: string): Promise<RequestRow> {
  const hash = signerTokenHash(token);
  const r = hash ? await findRequestByTokenHash(deps.db.kysely, hash) : undefined;
  if (!r) throw apiError('not_found', { message: 'This signing link is not valid.' });
  return r;
}

function assertSignable(doc: DocumentRow | undefined, r: RequestRow, now: number): asserts doc is DocumentRow {
  if (!doc || doc.status !== 'in_progress' || doc.seal_state !== 'none') throw apiError('request_not_signable');
  if (!(OPEN_REQUEST_STATES as readonly string[]).includes(r.status)) throw apiError('request_not_signable');
  if (r.expires_at <= now) throw apiError('request_not_signable', { message: 'This signing request has expired.' });
}

/** What the signing page needs: the request, its document and the signer's own fields. */
export async function signerView(deps: SigningDeps, token: string) {
  const r = await openRequestByToken(deps, token);
  const doc = (await findDocument(deps.db.kysely, r.workspace_id, r.document_id))!;
  const ws = await deps.db.kysely.selectFrom('workspaces').select(['name']).where('id', '=', r.workspace_id).executeTakeFirst();
  const fields = (JSON.parse(doc.fields) as PlacementField[]).filter((f) => f.role === r.role);
  const now = deps.clock.now();
  const open =
    doc.status === 'in_progress' && doc.seal_state === 'none' && (OPEN_REQUEST_STATES as readonly string[]).includes(r.status) && r.expires_at > now;
  const state = r.status === 'pending' || r.status === 'viewed' ? (r.expires_at <= now ? 'expired' : open ? 'open' : 'closed') : r.status;
  return { request: r, document: doc, workspaceName: ws?.name ?? '', fields, state };
}

export async function signerPdf(deps: SigningDeps, token: string): Promise<Uint8Array> {
  const r = await openRequestByToken(deps, token);
  if (r.status === 'queued') throw apiError('request_not_signable');
  const doc = (await findDocument(deps.db.kysely, r.workspace_id, r.document_id))!;
  return deps.blobs.get(doc.prepared_blob);
}

export async function viewRequest(deps: SigningDeps, token: string, meta: ClientMeta) {
  const found = await openRequestByToken(deps, token);
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute(async (trx) => {
    const doc = await lockDocument(deps.db, trx, found.document_id);
    const r = (await findRequest(trx, found.workspace_id, found.id))!;
    assertSignable(doc, r, now);
    if (r.status === 'viewed') return;
    if (!(await transitionRequest(trx, r.id, ['pending'], { status: 'viewed', viewed_at: now, view_ip: meta.ip, view_ua: meta.userAgent?.slice(0, 512) ?? null, updated_at: now }))) return;
    await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'signing_request.viewed', actor: signerActor(r), signingRequestId: r.id, ip: meta.ip, userAgent: meta.userAgent }, now);
    await deps.emit(trx, 'signing_request.viewed', doc.workspace_id, { signing_request_id: r.id, document_id: doc.id, signer: signerOf(r) });
  });
  deps.wake.dispatcher();
  return { status: 'viewed' };
}

export type SignBody = {
  signature: { type: 'typed'; text: string } | { type: 'drawn'; png_base64: string };
  fields?: Record<string, string>;
};

const MAX_PNG_BYTES = 2 * 1024 * 1024;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export async function signRequest(deps: SigningDeps, token: string, body: SignBody, meta: ClientMeta) {
  const found = await openRequestByToken(deps, token);
  const now = deps.clock.now();
  let png: Uint8Array | null = null;
  if (body.signature.type === 'drawn') {
    const b64 = body.signature.png_base64.replace(/^data:image\/png;base64,/, '');
    if (!BASE64.test(b64)) throw invalid('signature.png_base64', 'signature.png_base64 is not valid base64.');
    png = new Uint8Array(Buffer.from(b64, 'base64'));
    if (png.byteLength > MAX_PNG_BYTES) throw invalid('signature.png_base64', 'The drawn signature is over 2 MB.');
    if (png.byteLength < 8 || !Buffer.from(png.subarray(0, 8)).equals(PNG_MAGIC)) throw invalid('signature.png_base64', 'The drawn signature is not a PNG image.');
  } else if (body.signature.text.trim() === '') {
    throw invalid('signature.text', 'The typed signature is empty.');
  }

  let completed = false;
  await deps.db.kysely.transaction().execute(async (trx) => {
    const doc = await lockDocument(deps.db, trx, found.document_id);
    const r = (await findRequest(trx, found.workspace_id, found.id))!;
    assertSignable(doc, r, now);
    const fields = (JSON.parse(doc.fields) as PlacementField[]).filter((f) => f.role === r.role);
    const values: Record<string, string> = {};
    for (const [id, value] of Object.entries(body.fields ?? {})) {
      const f = fields.find((x) => x.id === id);
      if (!f || f.type !== 'text') throw invalid(`fields.${id}`, `Field "${id}" is not a text field of this signer.`);
      values[id] = value;
    }
    const blob = png ? await deps.blobs.put(png, 'signature', trx) : null;
    const moved = await transitionRequest(trx, r.id, OPEN_REQUEST_STATES, {
      status: 'signed',
      signed_at: now,
      sign_ip: meta.ip,
      sign_ua: meta.userAgent?.slice(0, 512) ?? null,
      signature_kind: body.signature.type,
      signature_text: body.signature.type === 'typed' ? body.signature.text.trim() : null,
      signature_blob: blob,
      field_values: JSON.stringify(values),
      updated_at: now,
    });
    if (!moved) throw apiError('request_not_signable');
    await appendAudit(
      trx,
      { documentId: doc.id, workspaceId: doc.workspace_id, action: 'signing_request.signed', actor: signerActor(r), signingRequestId: r.id, ip: meta.ip, userAgent: meta.userAgent, detail: { signature: body.signature.type, sha256: doc.prepared_sha256 } },
      now,
    );
    await deps.emit(trx, 'signing_request.signed', doc.workspace_id, {
      signing_request_id: r.id,
      document_id: doc.id,
      signer: signerOf(r),
      sha256: doc.prepared_sha256,
    });

    const all = await listRequests(trx, doc.id);
    if (all.every((x) => x.status === 'signed')) {
      await trx
        .updateTable('documents')
        .set({ seal_state: 'pending', final_request_id: r.id, updated_at: now })
        .where('id', '=', doc.id)
        .where('seal_state', '=', 'none')
        .execute();
      await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'document.all_signed', actor: 'system' }, now);
      completed = true;
    } else if (doc.signing_order === 'sequential') {
      await releaseNext(deps, trx, doc, all, now);
    }
  });
  if (completed) deps.wake.sealer();
  deps.mail.wake();
  deps.wake.dispatcher();
  return { status: 'signed' };
}

/** Sequential mode: the next queued signer becomes pending and gets the invitation; no new `sent` event. */
async function releaseNext(deps: SigningDeps, trx: Kysely<Database>, doc: DocumentRow, all: RequestRow[], now: number) {
  const next = all.find((x) => x.status === 'queued');
  if (!next) return;
  if (!(await transitionRequest(trx, next.id, ['queued'], { status: 'pending', released_at: now, sent_at: now, updated_at: now }))) return;
  // A fresh link replaces the one minted at creation, which was never mailed.
  const tk = newSignerToken();
  await trx.updateTable('signing_requests').set({ token_hash: tk.hash }).where('id', '=', next.id).execute();
  await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'signing_request.released', actor: 'system', signingRequestId: next.id }, now);
  await deps.mail.enqueue(trx, invitationMessage(doc, next, tk.token, 'invitation', deps.config.baseUrl));
}

export async function declineRequest(deps: SigningDeps, token: string, reason: string, meta: ClientMeta) {
  const found = await openRequestByToken(deps, token);
  const now = deps.clock.now();
  const text = reason.trim();
  if (text === '') throw invalid('reason', 'Give a reason for declining.');
  await deps.db.kysely.transaction().execute(async (trx) => {
    const doc = await lockDocument(deps.db, trx, found.document_id);
    const r = (await findRequest(trx, found.workspace_id, found.id))!;
    assertSignable(doc, r, now);
    if (!(await transitionRequest(trx, r.id, OPEN_REQUEST_STATES, { status: 'declined', declined_at: now, decline_reason: text, sign_ip: meta.ip, sign_ua: meta.userAgent?.slice(0, 512) ?? null, updated_at: now }))) {
      throw apiError('request_not_signable');
    }
    await transitionDocument(trx, doc.id, ['in_progress'], { status: 'declined', closed_at: now, updated_at: now });
    const others = (await listRequests(trx, doc.id)).filter((x) => x.id !== r.id && (x.status === 'pending' || x.status === 'viewed'));
    await closeOpenRequests(trx, doc.id, 'withdrawn', now);
    await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'signing_request.declined', actor: signerActor(r), signingRequestId: r.id, ip: meta.ip, userAgent: meta.userAgent, detail: { reason: text } }, now);
    await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'document.declined', actor: 'system' }, now);
    await deps.emit(trx, 'signing_request.declined', doc.workspace_id, { signing_request_id: r.id, document_id: doc.id, signer: signerOf(r), reason: text });
    for (const o of others) {
      await deps.mail.enqueue(trx, {
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
  deps.mail.wake();
  deps.wake.dispatcher();
  return { status: 'declined' };
}

async function withdrawDocumentTx(deps: SigningDeps, trx: Kysely<Database>, doc: DocumentRow, actor: string, requestId: string | null, now: number) {
  await transitionDocument(trx, doc.id, ['in_progress'], { status: 'withdrawn', closed_at: now, updated_at: now });
  await closeOpenRequests(trx, doc.id, 'withdrawn', now);
  await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'document.withdrawn', actor, signingRequestId: requestId }, now);
}

export async function withdrawRequest(deps: SigningDeps, auth: AuthContext, id: string) {
  const found = await findRequest(deps.db.kysely, auth.workspace.id, id);
  if (!found) throw apiError('not_found');
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute(async (trx) => {
    const doc = await lockDocument(deps.db, trx, found.document_id);
    const r = (await findRequest(trx, auth.workspace.id, id))!;
    if (!doc || doc.status !== 'in_progress' || doc.seal_state !== 'none' || !['pending', 'viewed', 'queued'].includes(r.status)) {
      throw apiError('request_not_signable', { message: 'Only an open signing request of an in-progress document can be withdrawn.' });
    }
    await withdrawDocumentTx(deps, trx, doc, actorOfKey(auth), r.id, now);
  });
  return (await findRequest(deps.db.kysely, auth.workspace.id, id))!;
}

export async function withdrawDocument(deps: SigningDeps, auth: AuthContext, id: string) {
  const found = await findDocument(deps.db.kysely, auth.workspace.id, id);
  if (!found) throw apiError('not_found');
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute(async (trx) => {
    const doc = await lockDocument(deps.db, trx, id);
    if (!doc || doc.status !== 'in_progress' || doc.seal_state !== 'none') {
      throw apiError('request_not_signable', { message: 'Only an in-progress document can be withdrawn.' });
    }
    await withdrawDocumentTx(deps, trx, doc, actorOfKey(auth), null, now);
  });
}

export async function remindRequest(deps: SigningDeps, auth: AuthContext, id: string) {
  const found = await findRequest(deps.db.kysely, auth.workspace.id, id);
  if (!found) throw apiError('not_found');
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute(async (trx) => {
    const doc = await lockDocument(deps.db, trx, found.document_id);
    const r = (await findRequest(trx, auth.workspace.id, id))!;
    assertSignable(doc, r, now);
    // The original link cannot be re-sent (only its hash is kept): the reminder carries a fresh one.
    const tk = newSignerToken();
    await trx.updateTable('signing_requests').set({ token_hash: tk.hash, reminded_at: now, updated_at: now }).where('id', '=', r.id).execute();
    await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'signing_request.reminded', actor: actorOfKey(auth), signingRequestId: r.id }, now);
    await deps.mail.enqueue(trx, invitationMessage(doc, r, tk.token, 'reminder', deps.config.baseUrl));
  });
  deps.mail.wake();
  return (await findRequest(deps.db.kysely, auth.workspace.id, id))!;
}

/**
 * The hourly expiry: every pending or viewed request past its expires_at becomes `expired` and emits
 * `signing_request.expired` once (expired_at = its expires_at); queued followers expire silently; the document
 * becomes `expired`. Safe with several workers: each request's guarded update succeeds for exactly one of them.
 */
export async function expireDue(deps: Pick<SigningDeps, 'db' | 'clock' | 'emit'>, batch = 200): Promise<{ expired: number }> {
  let expired = 0;
  for (;;) {
    const now = deps.clock.now();
    const due = await dueExpiries(deps.db.kysely, now, batch);
    if (due.length === 0) break;
    let progressed = 0;
    for (const item of due) {
      const done = await deps.db.kysely.transaction().execute(async (trx) => {
        const doc = await lockDocument(deps.db, trx, item.document_id);
        const r = await trx.selectFrom('signing_requests').selectAll().where('id', '=', item.id).executeTakeFirst();
        if (!doc || !r || r.expires_at > now) return false;
        if (!(await transitionRequest(trx, r.id, OPEN_REQUEST_STATES, { status: 'expired', closed_at: now, updated_at: now }))) return false;
        await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'signing_request.expired', actor: 'system', signingRequestId: r.id, detail: { expired_at: iso(r.expires_at) } }, now);
        await deps.emit(trx, 'signing_request.expired', doc.workspace_id, {
          signing_request_id: r.id,
          document_id: doc.id,
          signer: signerOf(r),
          expired_at: iso(r.expires_at),
        });
        await trx
          .updateTable('signing_requests')
          .set({ status: 'expired', closed_at: now, updated_at: now })
          .where('document_id', '=', doc.id)
          .where('status', '=', 'queued')
          .execute();
        if (await transitionDocument(trx, doc.id, ['in_progress'], { status: 'expired', closed_at: now, updated_at: now })) {
          await appendAudit(trx, { documentId: doc.id, workspaceId: doc.workspace_id, action: 'document.expired', actor: 'system' }, now);
        }
        return true;
      });
      if (done) {
        expired++;
        progressed++;
      }
    }
    if (progressed === 0) break;
  }
  return { expired };
}
