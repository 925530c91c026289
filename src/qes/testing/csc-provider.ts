// A local remote-signing provider for tests and demos: the CSC API v2 subset Signet uses (info, credentials/list,
// credentials/info, signatures/signHash; JSON over POST under /csc/v2/) and its OAuth 2.0 authorization server
// (csc-oauth.ts). Every CSC call but `info` needs a Bearer token; signHash signs only hashes the token's
// credential-scope grant names (SCAL2), each once. `fail` switches make one step fail the way a real provider can.
import { randomInt, X509Certificate } from 'node:crypto';
import http from 'node:http';
import { systemClock, type Clock } from '../../lib/clock.js';
import * as oauth from './csc-oauth.js';
import { createQesCa, keyBits, type QesCa, type QesCert, type QesKey, type QesVariant } from './qes-ca.js';
import { tempDir } from '../../pki/testing/tools.js';

export type CscFailure =
  'cancel' | 'token_refused' | 'down' | 'expired_cert' | 'revoked_cert' | 'not_qualified' | 'bad_signature' | null;

export const SIGN_ALGOS = {
  rsa: ['1.2.840.113549.1.1.1', '1.2.840.113549.1.1.11'], // rsaEncryption, sha256WithRSAEncryption
  p256: ['1.2.840.10045.2.1', '1.2.840.10045.4.3.2'], // id-ecPublicKey, ecdsa-with-SHA256
} as const;

export type CscProvider = {
  /** Origin of the provider; OAuth endpoints are `${url}/oauth2/authorize` and `${url}/oauth2/token`. */
  url: string;
  /** The CSC API v2 base: `${url}/csc/v2`. */
  cscUrl: string;
  clientId: string;
  clientSecret: string;
  /** Exact redirect URIs accepted at authorize; empty (the default) accepts any http(s) URI. */
  redirectUris: string[];
  /** The test QTSP's CA (PEM), for QES_CA_FILE; its CRL is served at `${url}/pki/crl.der`. */
  caPem: string;
  ca: QesCa;
  fail: CscFailure;
  /** A fresh one-time login code for `user` (single-use), as the signer would receive it by SMS. */
  loginCode(user?: string): string;
  credentialId(user?: string): string;
  /** The certificate signHash would use for `user` now (follows the fail switch). */
  currentCert(user?: string): QesCert;
  /** Every hash signed (base64), in order, for "the hash authorized is the hash signed" checks. */
  signed: Array<{ credentialID: string; hash: string }>;
  /** Every access token issued so far (tests check none was stored by the client). */
  accessTokens(): string[];
  close(): Promise<void>;
};

const VARIANT: Partial<Record<NonNullable<CscFailure>, QesVariant>> = {
  expired_cert: 'expired',
  revoked_cert: 'revoked',
  not_qualified: 'not_qualified',
};
const STATUS: Record<QesVariant, string> = {
  qualified: 'valid',
  not_qualified: 'valid',
  expired: 'expired',
  revoked: 'revoked',
};

type Reply = { status: number; json: object };
const cscError = (status: number, error: string, error_description: string): Reply => ({
  status,
  json: { error, error_description },
});

export async function startCscProvider(
  opts: { users?: string[]; key?: QesKey; clock?: Clock; clientId?: string; clientSecret?: string } = {},
): Promise<CscProvider> {
  const users = opts.users ?? ['signer'];
  const key = opts.key ?? 'rsa';
  const tmp = await tempDir('signet-csc-');
  let ca: QesCa | undefined;
  const credentialOf = (user: string) => `${user}-qes`;
  const userOf = (credentialID: string) => users.find((u) => credentialOf(u) === credentialID);
  const state: oauth.OAuthState = {
    clock: opts.clock ?? systemClock,
    clientId: opts.clientId ?? 'signet-test',
    clientSecret: opts.clientSecret ?? oauth.newId(),
    redirectUris: [],
    fail: () => provider.fail,
    loginCodes: new Map(),
    credentialOf,
    flows: new Map(),
    codes: new Map(),
    tokens: new Map(),
  };
  const certFor = (user: string) => {
    const variant = VARIANT[provider.fail ?? 'cancel'] ?? 'qualified';
    return { variant, cert: ca!.users[user]![variant] };
  };

  const bearer = (req: http.IncomingMessage) => {
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const grant = m ? state.tokens.get(m[1]!) : undefined;
    return grant && grant.expiresAt > state.clock.now() ? grant : undefined;
  };

  const csc = async (method: string, body: Record<string, unknown>, req: http.IncomingMessage): Promise<Reply> => {
    if (method === 'info')
      return {
        status: 200,
        json: {
          specs: '2.0.0.0',
          name: 'Test QTSP',
          logo: `${provider.url}/logo.png`,
          region: 'DE',
          lang: 'en',
          description: 'Local CSC API v2 provider for Signet tests',
          authType: ['oauth2code'],
          oauth2: provider.url,
          oauth2Issuer: provider.url,
          methods: ['credentials/list', 'credentials/info', 'signatures/signHash', 'oauth2/authorize', 'oauth2/token'],
        },
      };
    const grant = bearer(req);
    if (!grant) return cscError(401, 'invalid_token', 'a valid Bearer access token is required');
    const credentialID = typeof body.credentialID === 'string' ? body.credentialID : '';
    if (method === 'credentials/list') {
      if (grant.scope !== 'service') return cscError(403, 'insufficient_scope', 'scope service required');
      return { status: 200, json: { credentialIDs: [credentialOf(grant.user)], onlyValid: false } };
    }
    const owner = userOf(credentialID);
    if (owner !== grant.user || (grant.scope === 'credential' && grant.credentialID !== credentialID))
      return cscError(400, 'invalid_request', 'unknown credentialID');
    const { variant, cert } = certFor(owner);
    if (method === 'credentials/info') {
      const info = certInfo(cert);
      return {
        status: 200,
        json: {
          description: `Qualified signature credential of ${owner}`,
          key: { status: 'enabled', algo: [...SIGN_ALGOS[key]], len: keyBits(cert) },
          cert: { status: STATUS[variant], certificates: chain(cert), ...info },
          auth: { mode: 'oauth2code' },
          SCAL: '2',
          multisign: 1,
          lang: 'en',
        },
      };
    }
    if (method !== 'signatures/signHash') return cscError(404, 'invalid_request', `unknown method ${method}`);
    if (grant.scope !== 'credential') return cscError(403, 'insufficient_scope', 'scope credential required (SCAL2)');
    const hashes = Array.isArray(body.hashes) ? body.hashes.filter((h) => typeof h === 'string') : [];
    if (body.hashAlgorithmOID !== oauth.SHA256_OID)
      return cscError(400, 'invalid_request', `hashAlgorithmOID must be ${oauth.SHA256_OID}`);
    if (!(SIGN_ALGOS[key] as readonly string[]).includes(String(body.signAlgo)))
      return cscError(400, 'invalid_request', 'signAlgo does not match the credential key');
    if (hashes.length === 0 || hashes.length !== (body.hashes as unknown[]).length)
      return cscError(400, 'invalid_request', 'hashes missing');
    const hex = hashes.map(oauth.hashHex);
    if (hex.length > grant.numSignatures || !hex.every((h) => grant.hashes.has(h)))
      return cscError(400, 'invalid_request', 'hash not authorized by this access token');
    for (const h of hex) grant.hashes.delete(h);
    grant.numSignatures -= hex.length;
    const signatures: string[] = [];
    for (const h of hex) {
      const signedHash = Buffer.from(h, 'hex');
      if (provider.fail === 'bad_signature') signedHash[0] ^= 1; // well-formed, but over another hash
      signatures.push(Buffer.from(await ca!.signHash(cert, signedHash)).toString('base64'));
      provider.signed.push({ credentialID, hash: Buffer.from(h, 'hex').toString('base64') });
    }
    return { status: 200, json: { signatures } };
  };

  const certInfo = (cert: QesCert) => {
    const x = new X509Certificate(cert.certPem);
    return {
      issuerDN: x.issuer.split('\n').join(', '),
      subjectDN: x.subject.split('\n').join(', '),
      serialNumber: x.serialNumber,
      validFrom: new Date(x.validFrom).toISOString(),
      validTo: new Date(x.validTo).toISOString(),
    };
  };
  const chain = (cert: QesCert) => [cert.certDer, ca!.caCert.certDer].map((d) => Buffer.from(d).toString('base64'));

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', provider.url);
    const json = (r: Reply) =>
      res
        .writeHead(r.status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(r.json));
    if (provider.fail === 'down') return json(cscError(503, 'temporarily_unavailable', 'the provider is down'));
    if (req.method === 'GET' && url.pathname === '/oauth2/authorize')
      return oauth.authorize(state, url.searchParams, res);
    if (req.method === 'GET' && url.pathname === '/pki/crl.der')
      return res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(await ca!.crl());
    if (req.method === 'GET' && url.pathname === '/pki/ca.der')
      return res.writeHead(200, { 'content-type': 'application/pkix-cert' }).end(ca!.caCert.certDer);
    if (req.method !== 'POST') return json(cscError(405, 'invalid_request', 'POST only'));
    const isJson = (req.headers['content-type'] ?? '').startsWith('application/json');
    let body: Record<string, unknown>;
    try {
      body = isJson
        ? (JSON.parse(raw || '{}') as Record<string, unknown>)
        : Object.fromEntries(new URLSearchParams(raw));
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    } catch {
      return json(cscError(400, 'invalid_request', 'the body is not JSON'));
    }
    const form = new URLSearchParams(raw);
    if (url.pathname === '/oauth2/login') return oauth.login(state, form, res);
    if (url.pathname === '/oauth2/consent') return oauth.consent(state, form, res);
    if (url.pathname === '/oauth2/token')
      return json(oauth.token(state, body as Record<string, string>, req.headers.authorization));
    if (url.pathname.startsWith('/csc/v2/')) return json(await csc(url.pathname.slice(8), body, req));
    json(cscError(404, 'invalid_request', 'not found'));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > 1 << 20) req.destroy();
      else chunks.push(d);
    });
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString()).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`provider error: ${err.message}`);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const provider: CscProvider = {
    url,
    cscUrl: `${url}/csc/v2`,
    clientId: state.clientId,
    clientSecret: state.clientSecret,
    redirectUris: state.redirectUris,
    caPem: '',
    ca: undefined as unknown as QesCa,
    fail: null,
    loginCode(user = users[0]!) {
      if (!users.includes(user)) throw new Error(`unknown user ${user}`);
      let code: string;
      do code = String(randomInt(100000, 1000000));
      while (state.loginCodes.has(code));
      state.loginCodes.set(code, user);
      return code;
    },
    credentialId: (user = users[0]!) => credentialOf(user),
    currentCert: (user = users[0]!) => certFor(user).cert,
    signed: [],
    accessTokens: () => [...state.tokens.keys()],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await tmp.cleanup();
    },
  };
  try {
    ca = await createQesCa(tmp.path, { users, key, crlUrl: `${url}/pki/crl.der` });
  } catch (err) {
    await provider.close();
    throw err;
  }
  provider.ca = ca;
  provider.caPem = ca.caCert.certPem;
  return provider;
}
