// The local CSC provider's OAuth 2.0 authorization server: authorization code with PKCE S256 (required), a login
// page taking a one-time code, a consent page naming the one hash, and the token endpoint. Codes are single-use and
// live CODE_TTL_MS; a credential-scope token carries exactly the hashes the signer consented to.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Clock } from '../../lib/clock.js';

export const CODE_TTL_MS = 60_000;
export const TOKEN_TTL_MS = 3_600_000;
const FLOW_TTL_MS = 600_000;
export const SHA256_OID = '2.16.840.1.101.3.4.2.1';

export type Grant = {
  user: string;
  scope: 'service' | 'credential';
  credentialID?: string;
  /** Authorized hashes, hex; a signature consumes one. */
  hashes: Set<string>;
  numSignatures: number;
};
type Flow = Omit<Grant, 'user'> & {
  clientId: string;
  redirectUri: string;
  state: string;
  challenge: string;
  user?: string;
  expiresAt: number;
};
type Code = Grant & { clientId: string; redirectUri: string; challenge: string; expiresAt: number };

export type OAuthState = {
  clock: Clock;
  clientId: string;
  clientSecret: string;
  /** Accepted redirect URIs (exact); empty accepts any http(s) URI. */
  redirectUris: string[];
  fail: () => string | null;
  /** One-time login codes -> user. */
  loginCodes: Map<string, string>;
  credentialOf: (user: string) => string;
  flows: Map<string, Flow>;
  codes: Map<string, Code>;
  tokens: Map<string, Grant & { expiresAt: number }>;
};

export const newId = (bytes = 18) => randomBytes(bytes).toString('base64url');
/** base64 and base64url alike (Node's decoder takes both), as hex for comparing. */
export const hashHex = (b64: string) => Buffer.from(b64, 'base64').toString('hex');
const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const page = (res: http.ServerResponse, status: number, title: string, body: string): void => {
  res
    .writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    .end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
        `content="width=device-width"><title>${esc(title)}</title></head><body><main><h1>${esc(title)}</h1>` +
        `${body}</main></body></html>`,
    );
};

const loginForm = (flow: string, error = '') =>
  `<p>Test QTSP: sign in with the one-time code we sent you.</p>${error ? `<p role="alert">${esc(error)}</p>` : ''}` +
  `<form method="post" action="/oauth2/login"><input type="hidden" name="flow" value="${esc(flow)}">` +
  `<label for="otp">One-time code</label> <input id="otp" name="otp" autocomplete="one-time-code" required>` +
  ` <button type="submit">Sign in</button></form>`;

const consentForm = (flowId: string, f: Flow) => {
  const what =
    f.scope === 'credential'
      ? `<p>Authorize one signature with credential <code>${esc(f.credentialID!)}</code> over this SHA-256 hash:</p>` +
        [...f.hashes]
          .map((h) => `<p><code class="hash">${Buffer.from(h, 'hex').toString('base64')}</code></p>`)
          .join('')
      : '<p>Allow the application to list your signing credentials.</p>';
  return (
    `${what}<form method="post" action="/oauth2/consent"><input type="hidden" name="flow" value="${esc(flowId)}">` +
    `<button type="submit" name="decision" value="approve">Approve</button> ` +
    `<button type="submit" name="decision" value="deny">Cancel</button></form>`
  );
};

const redirect = (res: http.ServerResponse, uri: string, params: Record<string, string>) => {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  res.writeHead(302, { location: u.toString(), 'cache-control': 'no-store' }).end();
};

/** GET /oauth2/authorize: checks the request, then shows the login page. */
export function authorize(s: OAuthState, q: URLSearchParams, res: http.ServerResponse): void {
  const bad = (why: string) => page(res, 400, 'Invalid authorization request', `<p>${esc(why)}</p>`);
  const redirectUri = q.get('redirect_uri') ?? '';
  if (q.get('client_id') !== s.clientId) return bad('unknown client_id');
  if (!/^https?:\/\//.test(redirectUri)) return bad('redirect_uri missing');
  if (s.redirectUris.length > 0 && !s.redirectUris.includes(redirectUri)) return bad('redirect_uri not registered');
  if (q.get('response_type') !== 'code') return bad('response_type must be code');
  const challenge = q.get('code_challenge') ?? '';
  if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
    return bad('PKCE with code_challenge_method=S256 is required');
  const state = q.get('state');
  if (!state) return bad('state is required');
  const scope = q.get('scope');
  const expiresAt = s.clock.now() + FLOW_TTL_MS;
  const base = { clientId: s.clientId, redirectUri, state, challenge, expiresAt };
  let flow: Flow = { ...base, scope: 'service', hashes: new Set(), numSignatures: 0 };
  if (scope === 'credential') {
    const credentialID = q.get('credentialID') ?? '';
    const hashes = (q.get('hashes') ?? '').split(',').filter(Boolean);
    const num = Number(q.get('numSignatures'));
    if (!credentialID) return bad('credentialID is required for scope=credential');
    if (q.get('hashAlgorithmOID') !== SHA256_OID) return bad(`hashAlgorithmOID must be ${SHA256_OID}`);
    if (num !== 1 || hashes.length !== 1) return bad('numSignatures=1 with exactly one hash is required');
    const hex = hashHex(hashes[0]!);
    if (hex.length !== 64) return bad('the hash is not a SHA-256 value');
    flow = { ...flow, scope: 'credential', credentialID, hashes: new Set([hex]), numSignatures: 1 };
  } else if (scope !== 'service') return bad('scope must be service or credential');
  const id = newId();
  s.flows.set(id, flow);
  page(res, 200, 'Sign in to Test QTSP', loginForm(id));
}

const liveFlow = (s: OAuthState, id: string) => {
  const f = s.flows.get(id);
  return f && f.expiresAt > s.clock.now() ? f : undefined;
};

/** POST /oauth2/login: a one-time code names the user (single-use); then the consent page. */
export function login(s: OAuthState, form: URLSearchParams, res: http.ServerResponse): void {
  const id = form.get('flow') ?? '';
  const flow = liveFlow(s, id);
  if (!flow) return page(res, 400, 'Session expired', '<p>Start again from the application.</p>');
  const user = s.loginCodes.get(form.get('otp')?.trim() ?? '');
  if (!user) return page(res, 401, 'Sign in to Test QTSP', loginForm(id, 'That code is not valid.'));
  s.loginCodes.delete(form.get('otp')!.trim());
  if (flow.scope === 'credential' && flow.credentialID !== s.credentialOf(user)) {
    s.flows.delete(id);
    return redirect(res, flow.redirectUri, {
      error: 'access_denied',
      error_description: 'credential',
      state: flow.state,
    });
  }
  flow.user = user;
  page(res, 200, 'Authorize', consentForm(id, flow));
}

/** POST /oauth2/consent: approve issues a code; deny (or fail=cancel) redirects with access_denied. */
export function consent(s: OAuthState, form: URLSearchParams, res: http.ServerResponse): void {
  const id = form.get('flow') ?? '';
  const flow = liveFlow(s, id);
  if (!flow?.user) return page(res, 400, 'Session expired', '<p>Start again from the application.</p>');
  s.flows.delete(id);
  if (form.get('decision') !== 'approve' || s.fail() === 'cancel')
    return redirect(res, flow.redirectUri, {
      error: 'access_denied',
      error_description: 'The user cancelled',
      state: flow.state,
    });
  const code = newId();
  const { clientId, redirectUri, challenge, scope, credentialID, hashes, numSignatures, user } = flow;
  const grant = { clientId, redirectUri, challenge, scope, credentialID, hashes, numSignatures, user };
  s.codes.set(code, { ...grant, expiresAt: s.clock.now() + CODE_TTL_MS });
  redirect(res, redirectUri, { code, state: flow.state });
}

const same = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
};

/** POST /oauth2/token: form or JSON body; client secret in the body or HTTP Basic. */
export function token(
  s: OAuthState,
  body: Record<string, string>,
  authorization: string | undefined,
): { status: number; json: object } {
  const err = (status: number, error: string, error_description: string) => ({
    status,
    json: { error, error_description },
  });
  let [id, secret] = [body.client_id ?? '', body.client_secret ?? ''];
  if (authorization?.startsWith('Basic ')) {
    const pair = Buffer.from(authorization.slice(6), 'base64').toString();
    [id, secret] = [decodeURIComponent(pair.split(':')[0]!), decodeURIComponent(pair.split(':').slice(1).join(':'))];
  }
  if (!same(id, s.clientId) || !same(secret, s.clientSecret)) return err(401, 'invalid_client', 'client refused');
  if (body.grant_type !== 'authorization_code') return err(400, 'unsupported_grant_type', 'authorization_code only');
  const code = s.codes.get(body.code ?? '');
  s.codes.delete(body.code ?? ''); // single-use, even when the exchange fails below
  if (!code || code.expiresAt <= s.clock.now()) return err(400, 'invalid_grant', 'unknown, used or expired code');
  if (code.redirectUri !== body.redirect_uri) return err(400, 'invalid_grant', 'redirect_uri differs');
  const verifier = body.code_verifier ?? '';
  if (!same(createHash('sha256').update(verifier).digest('base64url'), code.challenge))
    return err(400, 'invalid_grant', 'code_verifier does not match the code_challenge');
  if (s.fail() === 'token_refused') return err(400, 'invalid_grant', 'the provider refused the token');
  const access = newId(32);
  const { user, scope, credentialID, hashes, numSignatures } = code;
  s.tokens.set(access, { user, scope, credentialID, hashes, numSignatures, expiresAt: s.clock.now() + TOKEN_TTL_MS });
  return {
    status: 200,
    json: { access_token: access, token_type: 'Bearer', expires_in: TOKEN_TTL_MS / 1000, scope },
  };
}
