// The provider's redirect back to Signet (GET /qes/callback). Guarantees: the callback is accepted only with the
// state of an unspent, unexpired ceremony, the PKCE verifier and signing link from the cookie of the browser that
// started it, and a link that is that ceremony's; the ceremony is spent before the code is exchanged, so a replayed
// code or state is refused. Provider failures become the signer's page (ceremony.ts `refuse`), never a 5xx.
import type { ClientMeta } from '../http/request-context.js';
import { requestByToken } from '../signing/signing.service.js';
import type { RequestRow } from '../signing/signing.repo.js';
import { transition } from '../signing/transition.js';
import { challengeOf, hashOf, parseCookie, redirectUri, refuse, same, type Answer } from './ceremony.js';
import { ProviderError } from './csc-client.js';
import { identified, landSignature, type QesDeps } from './landing.js';
import { findCeremony, useCeremony } from './qes.repo.js';

/** GET /qes/callback: checks state, PKCE and link binding, spends the ceremony, then the stage's work. */
export async function handleCallback(
  deps: QesDeps,
  query: Record<string, string | undefined>,
  rawCookie: string | undefined,
  meta: ClientMeta,
): Promise<Answer> {
  const expired: Answer = { kind: 'page', outcome: 'ceremony_expired', status: 400, clearCookie: true };
  const ck = parseCookie(rawCookie);
  const c = ck ? await findCeremony(deps.db.kysely, ck.c) : undefined;
  if (!ck || !c || !query.state || !same(hashOf(query.state), c.state_hash) || !same(challengeOf(ck.v), c.challenge))
    return expired;
  const retryHref = `/sign/${encodeURIComponent(ck.t)}`;
  let r: RequestRow;
  try {
    r = await requestByToken(deps, ck.t);
  } catch {
    return expired;
  }
  if (r.id !== c.signing_request_id) return expired;
  const spent = await transition(deps, c.document_id, async (tx) => useCeremony(tx.trx, c.id, tx.now));
  if (!spent) return { ...expired, retryHref };
  if (query.error)
    return refuse(
      deps,
      c,
      meta,
      query.error === 'access_denied' ? 'cancelled' : 'refused',
      { error: query.error.slice(0, 64) },
      retryHref,
    );
  if (!query.code) return refuse(deps, c, meta, 'refused', { error: 'no code' }, retryHref);
  try {
    const accessToken = await deps.qes.client.exchangeCode({
      code: query.code,
      verifier: ck.v,
      redirectUri: redirectUri(deps),
    });
    if (c.stage === 'identify') return await identified(deps, c, r, ck.t, accessToken, meta, retryHref);
    return await landSignature(deps, c, r, accessToken, meta, retryHref);
  } catch (err) {
    if (err instanceof ProviderError)
      return refuse(
        deps,
        c,
        meta,
        err.kind === 'down' ? 'provider_down' : 'refused',
        {
          error: err.providerCode ?? err.message,
        },
        retryHref,
      );
    throw err;
  }
}
