// The qualified signer's ceremony with their provider: two OAuth 2.0 authorization-code round trips (PKCE S256).
// First `identify` (scope service: credentials/list and credentials/info, the certificate checked), then, once the
// revision to sign and its one hash exist, `authorize` (scope credential, numSignatures 1, that hash; SCAL2); its
// callback calls signHash and lands the signature (landing.ts). Guarantees:
// - `state` is random, stored only as a hash, bound to one ceremony of one signing link, and single-use; the PKCE
//   verifier and the link live only in the signer's browser (an HttpOnly cookie scoped to /qes), so a callback
//   carrying another signer's state, a replayed code or a callback from another browser is refused;
// - access tokens live in this module's locals for one request: never stored, never logged;
// - qualified signers are serialized per document (documents.qes_lock_*): the one preparing or signing holds the
//   lock; another meets the "busy" page and retries; the lock lapses with the ceremony (CEREMONY_TTL_MS);
// - every failure leaves the file and the request as they were (the request stays signable), and the audit trail
//   records the provider, the credential's certificate and each step.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { ClientMeta } from '../http/request-context.js';
import { signerActor } from '../signing/presenters.js';
import { checkSignInput, drawnSignature } from '../signing/sign-input.js';
import { assertSignable, reread, requestByToken } from '../signing/signing.service.js';
import type { SignBody } from '../signing/signer.schemas.js';
import type { DocumentRow, RequestRow } from '../signing/signing.repo.js';
import { transition, type Tx } from '../signing/transition.js';
import { assertVerified } from '../signing/verification.js';
import { endCeremonies, insertCeremony, releaseQesLock, type CeremonyRow } from './qes.repo.js';
import type { QesDeps } from './landing.js';
import type { QesOutcome } from './page/qes-pages.js';

/** A ceremony's lifetime: the signer's time at the provider, and the longest a document stays locked for them. */
export const CEREMONY_TTL_MS = 15 * 60_000;
export const COOKIE = 'signet_qes';

export type Answer =
  | { kind: 'redirect'; url: string; cookie?: string }
  | { kind: 'page'; outcome: QesOutcome; status: number; retryHref?: string; clearCookie?: boolean; locale?: string };

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
export const hashOf = (s: string) => createHash('sha256').update(s).digest('hex');
export const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
export const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export const redirectUri = (deps: QesDeps) => `${deps.config.baseUrl}/qes/callback`;

type CookieValue = { c: string; v: string; t: string };

function cookieHeader(deps: QesDeps, value: CookieValue | null): string {
  const secure = deps.config.baseUrl.startsWith('https:') ? '; Secure' : '';
  const body = value ? b64url(Buffer.from(JSON.stringify(value))) : '';
  const age = value ? Math.floor(CEREMONY_TTL_MS / 1000) : 0;
  return `${COOKIE}=${body}; Path=/qes; HttpOnly; SameSite=Lax; Max-Age=${age}${secure}`;
}

export const clearCookie = (deps: QesDeps) => cookieHeader(deps, null);

export function parseCookie(raw: string | undefined): CookieValue | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString()) as CookieValue;
    return typeof v.c === 'string' && typeof v.v === 'string' && typeof v.t === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** The one place a ceremony row and its provider URL are made; the caller inserts the row in its transaction. */
export async function newCeremony(
  deps: QesDeps,
  r: RequestRow,
  token: string,
  now: number,
  o: { stage: 'identify' | 'authorize'; inputs: string; extra?: Partial<CeremonyRow>; query?: Record<string, string> },
) {
  const provider = await deps.qes.info();
  const state = b64url(randomBytes(24));
  const verifier = b64url(randomBytes(32));
  const row: CeremonyRow = {
    id: newId('qes'),
    workspace_id: r.workspace_id,
    document_id: r.document_id,
    signing_request_id: r.id,
    stage: o.stage,
    state_hash: hashOf(state),
    challenge: challengeOf(verifier),
    inputs: o.inputs,
    credential: null,
    base_sha256: null,
    prepared_blob: null,
    to_sign: null,
    created_at: now,
    expires_at: now + CEREMONY_TTL_MS,
    used_at: null,
    ...o.extra,
  };
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: deps.qes.clientId,
    redirect_uri: redirectUri(deps),
    scope: o.stage === 'identify' ? 'service' : 'credential',
    state,
    code_challenge: row.challenge,
    code_challenge_method: 'S256',
    ...o.query,
  });
  return {
    row,
    url: `${provider.authorizeUrl}?${q}`,
    cookie: cookieHeader(deps, { c: row.id, v: verifier, t: token }),
  };
}

/** The signer's form, kept until the signature lands (a drawn signature as base64 inside the row). */
function serializeInputs(body: SignBody, values: Record<string, unknown>): string {
  return JSON.stringify({ signature: body.signature, values });
}

/** POST /sign/:token/qes/start: the signer's values are checked, then they go to their provider (scope service). */
export async function startCeremony(deps: QesDeps, token: string, body: SignBody, meta: ClientMeta) {
  const found = await requestByToken(deps, token);
  const png = drawnSignature(body);
  const provider = await deps.qes.info().catch(() => {
    throw apiError('qes_unavailable', {
      message: 'The qualified signing provider cannot be reached; try again later.',
    });
  });
  return transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    assertVerified(r);
    if (doc.signature_level !== 'qes')
      throw apiError('invalid_request', { message: 'This document does not ask for a qualified signature.' });
    const input = checkSignInput(doc, r, body, png);
    await endCeremonies(tx.trx, r.id, tx.now);
    const c = await newCeremony(deps, r, token, tx.now, {
      stage: 'identify',
      inputs: serializeInputs(body, input.values),
    });
    await insertCeremony(tx.trx, c.row);
    await qesAudit(tx, doc, r, meta, 'qes.identification_started', { provider: provider.name });
    return { redirect_url: c.url, cookie: c.cookie };
  });
}

export const qesAudit = (
  tx: Tx,
  doc: DocumentRow,
  r: RequestRow,
  meta: ClientMeta,
  action: string,
  detail: Record<string, unknown>,
) =>
  tx.audit(doc, {
    action,
    actor: signerActor(r),
    signingRequestId: r.id,
    ip: meta.ip,
    userAgent: meta.userAgent,
    detail,
  });

/** Records why nothing was signed, releases the lock, and says which page the signer gets. */
export async function refuse(
  deps: QesDeps,
  c: CeremonyRow,
  meta: ClientMeta,
  reason: string,
  detail: Record<string, unknown> = {},
  retryHref?: string,
): Promise<Answer> {
  const outcome = reason as QesOutcome;
  const action =
    { cancelled: 'qes.cancelled', provider_down: 'qes.provider_unavailable' }[outcome as string] ?? 'qes.refused';
  const locale = await transition(deps, c.document_id, async (tx, doc) => {
    if (!doc) return undefined;
    const r = await reread(tx, { workspace_id: c.workspace_id, id: c.signing_request_id } as RequestRow);
    await releaseQesLock(tx.trx, doc.id, r.id);
    await qesAudit(tx, doc, r, meta, action, {
      provider: (await deps.qes.info()).name,
      stage: c.stage,
      reason,
      ...detail,
    });
    return doc.locale;
  });
  const status = outcome === 'provider_down' || outcome === 'revocation_unknown' ? 503 : outcome === 'busy' ? 409 : 400;
  return { kind: 'page', outcome, status, retryHref, clearCookie: true, locale };
}
