// Signer verification (issue 22): a signer whose request asks for `email_code` or `sms_code` proves control of that
// address with a six-digit code before the document is shown or acted on. Guarantees:
// - the code exists only in the message that carries it; a row keeps SHA-256(row id, code), its expiry (10 minutes),
//   its wrong tries and when it was used; no code is ever logged or answered;
// - a code is checked only against the newest code of the same signing request, so a code for signer A never passes
//   B; passing sets the request's `verified_at` (a server-side flag: the signing link stays the one credential, so
//   the embed page needs no cookie);
// - VERIFICATION_MAX_TRIES wrong entries lock a code (the next try is refused, a new code is needed); sends are
//   limited per signer per hour and in all; checks and sends run in `transition`, so they are serial per document;
// - every send, wrong try, lock and pass is an audit entry (method, masked destination), never with the code.
import { randomInt } from 'node:crypto';
import type { Db } from '../db/db.js';
import { migrationGate } from '../http/feature-gate.js';
import type { ClientMeta } from '../http/request-context.js';
import type { Locale } from '../i18n/i18n.js';
import { sha256Hex, safeEqual } from '../lib/crypto.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import {
  VERIFICATION_CODE_DIGITS,
  VERIFICATION_CODE_TTL_MS,
  VERIFICATION_MAX_TRIES,
  VERIFICATION_SEND_WINDOW_MS,
  VERIFICATION_SENDS_PER_HOUR,
  VERIFICATION_SENDS_TOTAL,
} from '../limits.js';
import { signerActor } from './presenters.js';
import type { RequestRow } from './signing.repo.js';
import { assertSignable, reread, type SigningDeps } from './signing.service.js';
import { transition } from './transition.js';
import { maskDestination, methodOf, normalizeCode } from './verification.js';
import {
  countSends,
  countWrongTry,
  insertCode,
  latestCode,
  markCodeUsed,
  markVerified,
  oldestSendSince,
  type CodeRow,
} from './verification.repo.js';

const codeHash = (id: string, code: string) => sha256Hex(`${id}:${code}`);

// Rolling upgrades: a server on a schema without migration 011 refuses to create a verified signer (503) rather than
// failing on the missing column; signers without verification never touch it.
export async function assertVerificationAvailable(db: Db): Promise<void> {
  if (!(await migrationGate(db, '011-signer-verification').available()))
    throw apiError('verification_unavailable', { headers: { 'Retry-After': '30' } });
}

/** What the gate page shows: the method, the masked destination, and the newest code's standing. */
export async function gateView(deps: Pick<SigningDeps, 'db' | 'clock'>, r: RequestRow) {
  const method = methodOf(r)!;
  const code = await latestCode(deps.db.kysely, r.id);
  const now = deps.clock.now();
  let standing: 'none' | 'active' | 'expired' | 'locked' = 'none';
  if (code && code.used_at == null)
    standing = code.tries >= VERIFICATION_MAX_TRIES ? 'locked' : now >= Number(code.expires_at) ? 'expired' : 'active';
  return {
    method,
    destination: maskDestination(method, r),
    standing,
    triesLeft: code ? Math.max(0, VERIFICATION_MAX_TRIES - code.tries) : VERIFICATION_MAX_TRIES,
  };
}

/** The send's number (1, 2, …), or a refusal over the limit: 429 with Retry-After (per hour), or for good (in all). */
async function checkSendLimit(trx: Trx, r: RequestRow, now: number): Promise<number> {
  const since = now - VERIFICATION_SEND_WINDOW_MS;
  const sends = await countSends(trx, r.id, since);
  if (sends.all >= VERIFICATION_SENDS_TOTAL)
    throw apiError('verification_send_limit', { meta: { limit: 'total', max: VERIFICATION_SENDS_TOTAL } });
  if (sends.recent >= VERIFICATION_SENDS_PER_HOUR) {
    const oldest = Number((await oldestSendSince(trx, r.id, since)) ?? now);
    const seconds = Math.max(1, Math.ceil((oldest + VERIFICATION_SEND_WINDOW_MS - now) / 1000));
    throw apiError('verification_send_limit', {
      meta: { limit: 'hour', max: VERIFICATION_SENDS_PER_HOUR, retry_after_seconds: seconds },
      headers: { 'Retry-After': String(seconds) },
    });
  }
  return sends.all + 1;
}
type Trx = Parameters<typeof countSends>[0];

const via = (meta: ClientMeta) => (meta.embedded ? { embedded_session: meta.embedded } : {});

/** Sends a fresh code by the request's method; an earlier unused code stops working (only the newest is checked). */
export async function sendCode(deps: SigningDeps, found: RequestRow, meta: ClientMeta) {
  return transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    const method = methodOf(r);
    if (!method || r.verified_at != null) return { status: 'verified' as const };
    const seq = await checkSendLimit(tx.trx, r, tx.now);
    const code = String(randomInt(0, 10 ** VERIFICATION_CODE_DIGITS)).padStart(VERIFICATION_CODE_DIGITS, '0');
    const row: CodeRow = {
      id: newId('vc'),
      workspace_id: r.workspace_id,
      document_id: r.document_id,
      signing_request_id: r.id,
      seq,
      method,
      code_hash: '',
      tries: 0,
      created_at: tx.now,
      expires_at: tx.now + VERIFICATION_CODE_TTL_MS,
      used_at: null,
    };
    row.code_hash = codeHash(row.id, code);
    await insertCode(tx.trx, row);
    const destination = maskDestination(method, r);
    await tx.audit(doc, {
      action: 'signer.verification_sent',
      actor: signerActor(r),
      signingRequestId: r.id,
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: { method, destination, ...via(meta) },
    });
    const base = { workspaceId: doc.workspace_id, documentId: doc.id, signingRequestId: r.id };
    const locale = doc.locale as Locale;
    if (method === 'sms_code') {
      await tx.sms({
        ...base,
        to: r.phone!,
        locale,
        template: 'verification_code',
        vars: {
          documentTitle: doc.title,
          signerName: r.name,
          url: deps.config.baseUrl,
          expiresAt: row.expires_at,
          code,
        },
      });
    } else {
      await tx.mail({
        ...base,
        to: { email: r.email, name: r.name },
        locale,
        template: 'verification_code',
        vars: { documentTitle: doc.title, signerName: r.name, code, expiresAt: row.expires_at },
      });
    }
    return { status: 'sent' as const, destination, expires_at: new Date(row.expires_at).toISOString() };
  });
}

type CheckOutcome = { ok: true } | { ok: false; error: 'verification_code_invalid'; triesLeft: number };

/**
 * Checks `input` against the newest code. A wrong try is committed (with its audit entry) before the refusal is
 * thrown, so a refused try still counts.
 */
export async function checkCode(deps: SigningDeps, found: RequestRow, input: string, meta: ClientMeta) {
  const entered = normalizeCode(input);
  const outcome = await transition(deps, found.document_id, async (tx, doc): Promise<CheckOutcome> => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    const method = methodOf(r);
    if (!method || r.verified_at != null) return { ok: true };
    const code = await latestCode(tx.trx, r.id);
    if (!code || code.used_at != null) throw apiError('verification_no_code');
    if (code.tries >= VERIFICATION_MAX_TRIES) throw apiError('verification_locked', { meta: { tries_left: 0 } });
    if (tx.now >= Number(code.expires_at)) throw apiError('verification_code_expired');
    const audit = { actor: signerActor(r), signingRequestId: r.id, ip: meta.ip, userAgent: meta.userAgent };
    const right = /^\d+$/.test(entered) && safeEqual(codeHash(code.id, entered), code.code_hash);
    if (right) {
      await markCodeUsed(tx.trx, code.id, tx.now);
      await markVerified(tx.trx, r.id, tx.now);
      await tx.audit(doc, { ...audit, action: 'signer.verification_passed', detail: { method, ...via(meta) } });
      return { ok: true };
    }
    const counted = await countWrongTry(tx.trx, code.id, code.tries);
    const tries = code.tries + (Number(counted.numUpdatedRows) > 0 ? 1 : 0);
    await tx.audit(doc, {
      ...audit,
      action: 'signer.verification_failed',
      detail: { method, tries, ...via(meta) },
    });
    // The last allowed wrong try locks the code: the next try is refused whatever it is.
    if (tries >= VERIFICATION_MAX_TRIES)
      await tx.audit(doc, { ...audit, action: 'signer.verification_locked', detail: { method, ...via(meta) } });
    return { ok: false, error: 'verification_code_invalid', triesLeft: VERIFICATION_MAX_TRIES - tries };
  });
  if (!outcome.ok) throw apiError(outcome.error, { meta: { tries_left: outcome.triesLeft } });
  return { status: 'verified' as const };
}
