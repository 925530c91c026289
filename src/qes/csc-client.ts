// The CSC API v2 client (Cloud Signature Consortium, v2.0.0.x) and the provider's OAuth 2.0 token endpoint: the
// calls a qualified signature needs (info, credentials/list, credentials/info, signatures/signHash) and nothing more.
// Guarantees: access tokens are returned to the caller and never stored or logged here; every call has a time limit;
// a failure is a ProviderError whose `kind` says what the signer is told: `down` (network, timeout, 5xx: retry
// later) or `refused` (the provider answered no). The provider is the operator's choice, so its URLs are not
// subject to the outbound-address guard that protects against callers' URLs.
import type { QesConfig } from '../config.js';

export const SHA256_OID = '2.16.840.1.101.3.4.2.1';
const CALL_TIMEOUT_MS = 15_000;

export class ProviderError extends Error {
  constructor(
    readonly kind: 'down' | 'refused',
    message: string,
    /** The provider's `error` code when it gave one (never its token or the signer's data). */
    readonly providerCode: string | null = null,
  ) {
    super(message);
  }
}

export type ProviderInfo = {
  name: string;
  authorizeUrl: string;
  tokenUrl: string;
  methods: string[];
};

export type CredentialInfo = {
  id: string;
  /** DER certificates, the signer's first, as the provider lists them. */
  chainDer: Uint8Array[];
  /** Key algorithm OIDs the credential offers (the key's and its signature algorithms). */
  keyAlgos: string[];
  keyStatus: string;
  certStatus: string;
  scal: string;
};

export type CscClient = {
  info(): Promise<ProviderInfo>;
  exchangeCode(o: { code: string; verifier: string; redirectUri: string }): Promise<string>;
  listCredentials(token: string): Promise<string[]>;
  credentialInfo(token: string, credentialID: string): Promise<CredentialInfo>;
  signHash(token: string, o: { credentialID: string; hash: Uint8Array; signAlgo: string }): Promise<Uint8Array>;
};

export function createCscClient(config: QesConfig): CscClient {
  let discovered: ProviderInfo | null = null;
  const info = async (): Promise<ProviderInfo> => {
    if (discovered) return discovered;
    const body = await call(`${config.providerUrl}/info`, json({}));
    const oauth2 = typeof body.oauth2 === 'string' ? body.oauth2.replace(/\/+$/, '') : null;
    const authorizeUrl = config.authorizeUrl ?? (oauth2 ? `${oauth2}/oauth2/authorize` : null);
    const tokenUrl = config.tokenUrl ?? (oauth2 ? `${oauth2}/oauth2/token` : null);
    if (!authorizeUrl || !tokenUrl)
      throw new ProviderError(
        'refused',
        'the provider publishes no oauth2 base in info; set QES_AUTHORIZE_URL and QES_TOKEN_URL',
      );
    const methods = Array.isArray(body.methods) ? body.methods.filter((m): m is string => typeof m === 'string') : [];
    const authTypes = Array.isArray(body.authType) ? body.authType : [];
    if (!authTypes.includes('oauth2code'))
      throw new ProviderError(
        'refused',
        'the provider does not offer the OAuth 2.0 authorization code flow (authType oauth2code)',
      );
    discovered = {
      name: typeof body.name === 'string' && body.name ? body.name : 'your provider',
      authorizeUrl,
      tokenUrl,
      methods,
    };
    return discovered;
  };

  const bearer = (token: string, body: object) => ({
    ...json(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  });

  return {
    info,
    async exchangeCode({ code, verifier, redirectUri }) {
      const { tokenUrl } = await info();
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        client_id: config.clientId,
        client_secret: config.clientSecret,
      });
      const body = await call(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      if (typeof body.access_token !== 'string' || !body.access_token)
        throw new ProviderError('refused', 'the token endpoint returned no access_token');
      return body.access_token;
    },
    async listCredentials(token) {
      const body = await call(`${config.providerUrl}/credentials/list`, bearer(token, {}));
      const ids = Array.isArray(body.credentialIDs)
        ? body.credentialIDs.filter((x): x is string => typeof x === 'string')
        : [];
      return ids;
    },
    async credentialInfo(token, credentialID) {
      const body = await call(
        `${config.providerUrl}/credentials/info`,
        bearer(token, { credentialID, certificates: 'chain', certInfo: true, authInfo: true }),
      );
      const cert = (body.cert ?? {}) as Record<string, unknown>;
      const key = (body.key ?? {}) as Record<string, unknown>;
      const certs = Array.isArray(cert.certificates)
        ? cert.certificates.filter((c): c is string => typeof c === 'string')
        : [];
      if (certs.length === 0) throw new ProviderError('refused', 'credentials/info returned no certificate');
      return {
        id: credentialID,
        chainDer: certs.map((c) => new Uint8Array(Buffer.from(c, 'base64'))),
        keyAlgos: Array.isArray(key.algo) ? key.algo.filter((a): a is string => typeof a === 'string') : [],
        keyStatus: typeof key.status === 'string' ? key.status : 'enabled',
        certStatus: typeof cert.status === 'string' ? cert.status : 'valid',
        scal: String(body.SCAL ?? '1'),
      };
    },
    async signHash(token, { credentialID, hash, signAlgo }) {
      const body = await call(
        `${config.providerUrl}/signatures/signHash`,
        bearer(token, {
          credentialID,
          hashes: [Buffer.from(hash).toString('base64')],
          hashAlgorithmOID: SHA256_OID,
          signAlgo,
        }),
      );
      const sig = Array.isArray(body.signatures) ? body.signatures[0] : undefined;
      if (typeof sig !== 'string' || !sig) throw new ProviderError('refused', 'signHash returned no signature');
      return new Uint8Array(Buffer.from(sig, 'base64'));
    },
  };
}

const json = (body: object): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** One call: JSON object back, or a ProviderError (never the response body of a failure beyond its `error` code). */
async function call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    throw new ProviderError('down', `the provider could not be reached (${cause ?? (err as Error).name})`);
  }
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const obj = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  if (res.status >= 500 || res.status === 429)
    throw new ProviderError('down', `the provider answered ${res.status}`, codeOf(obj));
  if (!res.ok) throw new ProviderError('refused', `the provider answered ${res.status}`, codeOf(obj));
  if (!obj) throw new ProviderError('down', 'the provider answered with something other than a JSON object');
  return obj;
}

const codeOf = (o: Record<string, unknown> | null) =>
  o && typeof o.error === 'string' ? o.error.slice(0, 64).replace(/[^\w.-]/g, '') : null;
