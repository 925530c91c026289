// POST /v1/signing-requests: one document and one signing request per signer. Guarantees: nothing is created when
// a request is refused (body, roles, locale, expiry, callback URL and the monthly cap are checked, and the file is
// fetched, inspected and placed in worker threads, before the one transaction that writes anything); that
// transaction writes the document, the requests (token hashes only), the callback hook, the audit entries, one
// `signing_request.sent` per signer and the invitations of the signers released now.
import { iso } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { isEmailAddress } from '../lib/email.js';
import { requireFeature } from '../workspaces/features.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { DEFAULT_EXPIRY_MS, MAX_EXPIRY_MS, MAX_FILE_BYTES } from '../limits.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { createHook } from '../webhooks/hooks.repo.js';
import { validateTargetUrl } from '../webhooks/hooks.service.js';
import { isKnownLocale } from '../mail/locales.js';
import { keyActor, presentRequestBrief } from './presenters.js';
import type { CreateBody, Created, FileIn } from './signing.schemas.js';
import { countDocumentsSince, insertDocument, type DocumentRow, type RequestRow } from './signing.repo.js';
import { BASE64, invalid, invitationMessage, type SigningDeps } from './signing.service.js';
import { newLinkToken } from '../lib/tokens.js';
import { inTransaction } from './transition.js';

/**
 * A new signing request of `doc` with a fresh link (the token is returned once, for the invitation; only its hash is
 * kept). `released`: invited now (pending), or waiting for its turn (queued).
 */
export function newRequestRow(
  doc: Pick<DocumentRow, 'id' | 'workspace_id' | 'expires_at'>,
  signer: Pick<RequestRow, 'slot' | 'role' | 'email' | 'name'> &
    Partial<Pick<RequestRow, 'channel' | 'phone' | 'routing_order'>>,
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
  };
  return { row, token: tk.token };
}

/** First instant of the current calendar month, UTC: the window of the monthly document cap. */
export const monthStart = (now: number): number => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};

/** An uploaded file's bytes; refuses empty files, bad base64 and anything over the file limit without decoding it. */
export function decodeFile(file: FileIn): Uint8Array {
  // Copies only when there is whitespace to remove: the value may be 33 MB.
  const b64 = /\s/.test(file.content_base64) ? file.content_base64.replace(/\s+/g, '') : file.content_base64;
  if (b64.length === 0)
    throw apiError('invalid_file', { message: 'The file is empty.', meta: { field: 'file.content_base64' } });
  if (!BASE64.test(b64) || b64.length % 4 === 1)
    throw invalid('file.content_base64', 'file.content_base64 is not valid base64.');
  if ((b64.length * 3) / 4 > MAX_FILE_BYTES + 3)
    throw apiError('file_too_large', { meta: { max_bytes: MAX_FILE_BYTES } });
  const decoded = Buffer.from(b64, 'base64');
  // A large decode owns its memory: view it rather than copy it (a small one may sit in Node's shared pool).
  const bytes =
    decoded.byteLength === decoded.buffer.byteLength ? new Uint8Array(decoded.buffer) : new Uint8Array(decoded);
  if (bytes.byteLength > MAX_FILE_BYTES) throw apiError('file_too_large', { meta: { max_bytes: MAX_FILE_BYTES } });
  return bytes;
}

/** Exactly one of `file` (base64) or `file_url` (fetched under the outbound rule). */
export async function fileOf(deps: SigningDeps, body: { file?: FileIn; file_url?: string }): Promise<Uint8Array> {
  if ((body.file === undefined) === (body.file_url === undefined))
    throw invalid('file', 'Give exactly one of file or file_url.');
  return body.file ? decodeFile(body.file) : deps.files.fetch(body.file_url!);
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

export function resolveExpiry(raw: string | undefined, now: number): number {
  if (raw === undefined) return now + DEFAULT_EXPIRY_MS;
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d\d-\d\dT/.test(raw) || Number.isNaN(ms))
    throw invalid('expires_at', 'expires_at must be an ISO 8601 timestamp.');
  if (ms <= now) throw invalid('expires_at', 'expires_at must be in the future.');
  if (ms > now + MAX_EXPIRY_MS) throw invalid('expires_at', 'expires_at must be at most 365 days ahead.');
  return ms;
}

export async function checkMonthlyCap(deps: SigningDeps, auth: AuthContext, now: number): Promise<void> {
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
    throw apiError('qes_unavailable');
  }
  const now = deps.clock.now();

  validateSigners(body.signers);
  const locale = body.locale ?? 'en';
  if (!isKnownLocale(locale)) throw invalid('locale', `Unknown locale "${locale}".`);
  const expiresAt = resolveExpiry(body.expires_at, now);
  const order = body.signing_order ?? 'parallel';
  if ((body.file === undefined) === (body.file_url === undefined))
    throw invalid('file', 'Give exactly one of file or file_url.');
  if (body.placement === 'coordinates' && !body.fields?.length)
    throw invalid('fields', 'placement "coordinates" needs fields[].');
  if (body.placement !== 'coordinates' && body.fields !== undefined)
    throw invalid('fields', 'fields[] is only used with placement "coordinates".');
  const callbackUrl =
    body.callback_url !== undefined
      ? await validateTargetUrl(body.callback_url, deps.config.allowPrivateNetwork)
      : null;
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
        ? { mode: 'auto_append', signers: body.signers }
        : { mode: 'coordinates', roles, fields: body.fields! },
  );

  const docId = newId('doc');
  const title = (body.title ?? fileName.replace(/\.pdf$/i, '')).slice(0, 200) || 'Untitled document';
  const tokens: string[] = [];
  const requests: RequestRow[] = body.signers.map((s, i) => {
    const { row, token } = newRequestRow(
      { id: docId, workspace_id: auth.workspace.id, expires_at: expiresAt },
      { slot: i + 1, role: s.role, email: s.email, name: s.name.trim() },
      order === 'parallel' || i === 0,
      now,
    );
    tokens.push(token);
    return row;
  });

  const callback = await inTransaction(
    deps,
    async (tx) => {
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
        original_blob: await deps.blobs.put(original, 'original', tx.trx),
        prepared_sha256: sha256Hex(prepared.pdf),
        prepared_blob: await deps.blobs.put(prepared.pdf, 'prepared', tx.trx),
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
      let callback: { hook_id: string; secret: string } | undefined;
      if (callbackUrl) {
        const hook = await createHook(
          tx.trx,
          { workspaceId: auth.workspace.id, targetUrl: callbackUrl, events: [], documentId: docId, source: 'callback' },
          now,
        );
        doc.callback_hook_id = hook.id;
        callback = { hook_id: hook.id, secret: hook.secret };
      }
      await insertDocument(tx.trx, doc, requests);
      const detail = {
        sha256: info.sha256,
        file_name: doc.file_name,
        pages: prepared.pageCount,
        placement: body.placement,
        signing_order: order,
      };
      await tx.audit(doc, {
        action: 'document.created',
        actor: keyActor(auth),
        ip: meta.ip,
        userAgent: meta.userAgent,
        detail,
      });
      for (const [i, r] of requests.entries()) {
        const queued = r.status === 'queued';
        await tx.audit(doc, {
          action: 'signing_request.sent',
          actor: keyActor(auth),
          signingRequestId: r.id,
          detail: { email: r.email, role: r.role, queued },
        });
        await tx.emit('signing_request.sent', doc.workspace_id, {
          signing_request_id: r.id,
          document_id: docId,
          signer: { email: r.email, role: r.role, name: r.name, slot: r.slot },
          locale,
          source: 'v1_api',
        });
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
    ...(callback ? { callback } : {}),
  };
}
