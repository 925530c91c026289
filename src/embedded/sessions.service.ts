// Embedded signing sessions. Guarantees:
// - Minting refuses in the contract's order (tier, body, origin form, origin registered on this key, request,
//   signable) and creates nothing when it refuses; it changes neither the request nor its e-mail link.
// - A session opens one signing request, for one origin, until its own expiry; only the SHA-256 of its token is kept.
// - Acting through a session is acting as the signer: the same service calls, transitions, audit entries and
//   webhooks as the e-mail link, so an embedded signature is indistinguishable downstream.
import type { ScheduledJob } from '../jobs/scheduler.js';
import { pruneJob, type PruneDeps } from '../jobs/prune.js';
import { apiKeyOf, type AuthContext } from '../http/request-context.js';
import { originAllowed, parseExactOrigin } from '../keys/origins.js';
import { iso } from '../lib/clock.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { isKnownLocale } from '../i18n/i18n.js';
import { findDocument, findRequest, type RequestRow } from '../signing/signing.repo.js';
import { assertSignable, invalid, signerView, type SigningDeps } from '../signing/signing.service.js';
import { linkTokenHash, newLinkToken } from '../lib/tokens.js';
import type { SessionBody, SessionOut } from './embedded.schemas.js';
import { EMBED_SESSIONS_PRUNE, findSessionByTokenHash, insertSession, type SessionRow } from './sessions.repo.js';

export const presentSession = (s: SessionRow, url: string): SessionOut => ({
  id: s.id,
  url,
  origin: s.origin,
  signing_request_id: s.signing_request_id,
  locale: s.locale,
  expires_at: iso(s.expires_at),
});

/** POST /v1/embedded/sign-sessions, after the tier check and the schema (ttl, shapes) have passed. */
export async function mintSession(deps: SigningDeps, auth: AuthContext, body: SessionBody): Promise<SessionOut> {
  if (!isKnownLocale(body.locale)) throw invalid('locale', `Unknown locale "${body.locale}".`);
  const origin = parseExactOrigin(body.origin);
  if (!origin.ok) throw invalid('origin', `origin must be a plain https origin: ${origin.reason}.`);
  if (!originAllowed(auth.allowedOrigins, origin.value))
    throw apiError('origin_not_allowed', {
      message: `The origin ${origin.value} is not registered on this API key.`,
      meta: { origin: origin.value },
    });
  const r = await findRequest(deps.db.kysely, auth.workspace.id, body.signing_request_id);
  if (!r) throw apiError('not_found', { message: 'No such signing request.' });
  const now = deps.clock.now();
  assertSignable(await findDocument(deps.db.kysely, r.workspace_id, r.document_id), r, now);

  const { token, hash } = newLinkToken();
  const row: SessionRow = {
    id: newId('ses'),
    workspace_id: auth.workspace.id,
    signing_request_id: r.id,
    key_id: apiKeyOf(auth),
    origin: origin.value,
    locale: body.locale,
    token_hash: hash,
    created_at: now,
    expires_at: now + body.ttl_seconds * 1000,
  };
  await insertSession(deps.db.kysely, row);
  return presentSession(row, `${deps.config.baseUrl}/embed/sign/${token}`);
}

export type OpenSession = { session: SessionRow; request: RequestRow; ended: boolean };

/** The session a page's token opens, its request, and whether the session's own time is up; 404 otherwise. */
export async function sessionByToken(deps: Pick<SigningDeps, 'db' | 'clock'>, token: string): Promise<OpenSession> {
  const hash = linkTokenHash(token);
  const session = hash ? await findSessionByTokenHash(deps.db.kysely, hash) : undefined;
  const request = session && (await findRequest(deps.db.kysely, session.workspace_id, session.signing_request_id));
  if (!session || !request) throw apiError('not_found', { message: 'This signing session is not valid.' });
  return { session, request, ended: session.expires_at <= deps.clock.now() };
}

/** A session that may still act, with its request, or 409 request_not_signable (`meta.state: "session_expired"`). */
export async function actingSession(deps: Pick<SigningDeps, 'db' | 'clock'>, token: string): Promise<OpenSession> {
  const s = await sessionByToken(deps, token);
  if (s.ended)
    throw apiError('request_not_signable', {
      message: 'This signing session has ended.',
      meta: { state: 'session_expired' },
    });
  return s;
}

/** What the embed page shows: the signing page while both session and request are open, else why it ended. */
export async function embedView(deps: Pick<SigningDeps, 'db' | 'clock'>, token: string) {
  const s = await sessionByToken(deps, token);
  const view = await signerView(deps, s.request);
  const state = s.ended ? 'session_expired' : view.state;
  return { ...s, view, state, endsInMs: Math.max(0, s.session.expires_at - deps.clock.now()) };
}

/** Hourly: sessions that ended more than the sessions retention ago (a week by default) go. */
export const pruneEmbedSessionsJob = (deps: PruneDeps): ScheduledJob =>
  pruneJob(deps, { targets: [EMBED_SESSIONS_PRUNE], retention: 'sessionsMs', needs: '006-embedded-sessions' });
