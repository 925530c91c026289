import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.js';
import { CODE_TTL_MS, SHA256_OID } from './csc-oauth.js';
import { SIGN_ALGOS, startCscProvider, type CscProvider } from './csc-provider.js';
import { run, tempDir } from '../../pki/testing/tools.js';

const REDIRECT = 'http://127.0.0.1:9/qes/callback';
const clock = new ManualClock();
let p: CscProvider;
let tmp: Awaited<ReturnType<typeof tempDir>>;
before(async () => {
  p = await startCscProvider({ users: ['alice', 'bob'], clock });
  tmp = await tempDir();
});
after(async () => {
  await p.close();
  await tmp.cleanup();
});

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const pkce = () => {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
};
const sha256 = (s: string) => createHash('sha256').update(s).digest();

type AuthOpts = { user?: string; hash?: Buffer; challenge: string; state?: string; decision?: string };
const authorizeUrl = (o: AuthOpts, extra: Record<string, string> = {}) => {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: REDIRECT,
    code_challenge: o.challenge,
    code_challenge_method: 'S256',
    state: o.state ?? 'st-1',
    ...(o.hash
      ? {
          scope: 'credential',
          credentialID: p.credentialId(o.user ?? 'alice'),
          numSignatures: '1',
          hashes: b64url(o.hash),
          hashAlgorithmOID: SHA256_OID,
        }
      : { scope: 'service' }),
    ...extra,
  });
  return `${p.url}/oauth2/authorize?${q}`;
};
const post = (path: string, form: Record<string, string>) =>
  fetch(`${p.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
    redirect: 'manual',
  });
const flowOf = (html: string) => /name="flow" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** The signer's side: authorize page, login with a one-time code, consent; returns the redirect's parameters. */
async function authorize(o: AuthOpts): Promise<URLSearchParams> {
  const page = await fetch(authorizeUrl(o));
  const html = await page.text();
  assert.equal(page.status, 200, html);
  assert.match(html, /One-time code/, 'the login page asks for the one-time code');
  const login = await post('/oauth2/login', { flow: flowOf(html), otp: p.loginCode(o.user ?? 'alice') });
  const consent = await login.text();
  assert.equal(login.status, 200, consent);
  if (o.hash) assert.ok(consent.includes(o.hash.toString('base64')), 'the consent page shows the hash');
  const done = await post('/oauth2/consent', { flow: flowOf(consent), decision: o.decision ?? 'approve' });
  assert.equal(done.status, 302, 'the consent redirects back');
  const location = new URL(done.headers.get('location')!);
  assert.equal(`${location.origin}${location.pathname}`, REDIRECT, 'back to the redirect_uri');
  return location.searchParams;
}

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  post('/oauth2/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: p.clientId,
    client_secret: p.clientSecret,
    ...extra,
  });

async function tokenFor(o: { user?: string; hash?: Buffer } = {}): Promise<string> {
  const { verifier, challenge } = pkce();
  const back = await authorize({ ...o, challenge });
  const res = await exchange(back.get('code')!, verifier);
  const body = (await res.json()) as { access_token: string; token_type: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.token_type, 'Bearer');
  return body.access_token;
}

async function csc<T = Record<string, unknown>>(method: string, body: object, token?: string) {
  const res = await fetch(`${p.cscUrl}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T & { error?: string } };
}

type Info = {
  SCAL: string;
  key: { algo: string[] };
  cert: { status: string; certificates: string[]; subjectDN: string };
};
const credentialInfo = async (user = 'alice') => {
  const r = await csc<Info>('credentials/info', { credentialID: p.credentialId(user), certificates: 'chain' }, await tokenFor({ user })); // prettier-ignore
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};
const signHash = (token: string, hash: Buffer, user = 'alice') =>
  csc<{ signatures: string[] }>(
    'signatures/signHash',
    { credentialID: p.credentialId(user), hashes: [hash.toString('base64')], hashAlgorithmOID: SHA256_OID, signAlgo: SIGN_ALGOS.rsa[1] }, // prettier-ignore
    token,
  );

let n = 0;
const file = async (data: Uint8Array | string) => {
  const f = join(tmp.path, `f${++n}`);
  await writeFile(f, data);
  return f;
};
const pem = (der: string) => `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`; // prettier-ignore
/** openssl pkeyutl -verify of a raw signature over a SHA-256 hash, against the certificate. */
const verifies = async (certB64: string, hash: Buffer, sigB64: string) => {
  const args = ['pkeyutl', '-verify', '-certin', '-inkey', await file(pem(certB64)), '-pkeyopt', 'digest:sha256'];
  const r = await run('openssl', [...args, '-in', await file(hash), '-sigfile', await file(Buffer.from(sigB64, 'base64'))]); // prettier-ignore
  return r.code === 0 && /Verified Successfully/.test(r.stdout);
};
const QC = {
  compliance: '060604008e460101',
  sscd: '060604008e460104',
  esign: '060704008e46010601',
};
const hexOf = (certB64: string) => Buffer.from(certB64, 'base64').toString('hex');

test('csc provider: info, service and credential authorization, signHash verified by openssl', async () => {
  p.fail = null;
  const info = await csc<{ oauth2: string; methods: string[] }>('info', {});
  assert.equal(info.status, 200);
  assert.equal(info.body.oauth2, p.url, 'info names the OAuth 2.0 base URI');
  assert.ok(info.body.methods.includes('signatures/signHash'), 'info lists signHash');

  const service = await tokenFor({ user: 'alice' });
  const list = await csc<{ credentialIDs: string[] }>('credentials/list', {}, service);
  assert.deepEqual(list.body.credentialIDs, ['alice-qes']);
  const ci = await csc<Info>('credentials/info', { credentialID: 'alice-qes', certificates: 'chain' }, service);
  assert.equal(ci.body.SCAL, '2');
  assert.equal(ci.body.cert.status, 'valid');
  assert.deepEqual(ci.body.key.algo, [...SIGN_ALGOS.rsa]);
  assert.equal(ci.body.cert.certificates.length, 2, 'signer certificate and CA');
  assert.match(ci.body.cert.subjectDN, /CN=alice/);
  const [leaf, caDer] = ci.body.cert.certificates as [string, string];
  for (const oid of Object.values(QC)) assert.ok(hexOf(leaf).includes(oid), `QC statement ${oid} present`);
  const text = await run('openssl', ['x509', '-noout', '-ext', 'keyUsage', '-in', await file(pem(leaf))]);
  assert.match(text.stdout, /Non Repudiation/);
  const chainOk = await run('openssl', ['verify', '-CAfile', await file(pem(caDer)), await file(pem(leaf))]);
  assert.equal(chainOk.code, 0, chainOk.stderr);
  assert.equal(pem(caDer).replace(/\s/g, ''), p.caPem.replace(/\s/g, ''), 'the chain ends at caPem');
  assert.equal((await csc('credentials/info', { credentialID: 'bob-qes' }, service)).status, 400, "not bob's");
  assert.equal((await signHash(service, sha256('x'))).status, 403, 'a service token cannot sign');

  const hash = sha256('revision 1 of the document');
  const token = await tokenFor({ user: 'alice', hash });
  const signed = await signHash(token, hash);
  assert.equal(signed.status, 200, JSON.stringify(signed.body));
  assert.ok(await verifies(leaf, hash, signed.body.signatures[0]!), 'openssl verifies the signature');
  assert.ok(!(await verifies(leaf, sha256('other'), signed.body.signatures[0]!)), 'and it can fail');
  assert.deepEqual(p.signed.at(-1), { credentialID: 'alice-qes', hash: hash.toString('base64') });
  assert.equal((await signHash(token, hash)).status, 400, 'one signature per authorization');
});

test('csc provider: PKCE, codes, state, hashes and bearer are enforced', async () => {
  p.fail = null;
  const { verifier, challenge } = pkce();
  const back = await authorize({ challenge, state: 'link-42' });
  assert.equal(back.get('state'), 'link-42', 'state comes back unchanged');
  const wrong = await exchange(back.get('code')!, pkce().verifier);
  assert.equal(wrong.status, 400, 'PKCE mismatch refused');
  assert.equal(((await wrong.json()) as { error: string }).error, 'invalid_grant');
  assert.equal((await exchange(back.get('code')!, verifier)).status, 400, 'a code is spent even by a failed try');

  const again = pkce();
  const code = (await authorize({ challenge: again.challenge })).get('code')!;
  assert.equal((await exchange(code, again.verifier, { client_secret: 'nope' })).status, 401, 'client refused');
  const third = pkce();
  const code3 = (await authorize({ challenge: third.challenge })).get('code')!;
  assert.equal((await exchange(code3, third.verifier, { redirect_uri: 'http://127.0.0.1:9/x' })).status, 400);
  const fourth = pkce();
  const code4 = (await authorize({ challenge: fourth.challenge })).get('code')!;
  assert.equal((await exchange(code4, fourth.verifier)).status, 200);
  assert.equal((await exchange(code4, fourth.verifier)).status, 400, 'a reused code is refused');
  const late = pkce();
  const code5 = (await authorize({ challenge: late.challenge })).get('code')!;
  clock.advance(CODE_TTL_MS + 1);
  assert.equal((await exchange(code5, late.verifier)).status, 400, 'an expired code is refused');

  const noPkce = await fetch(authorizeUrl({ challenge: '' }));
  assert.equal(noPkce.status, 400, 'PKCE is required');
  const plain = await fetch(authorizeUrl({ challenge }, { code_challenge_method: 'plain' }));
  assert.equal(plain.status, 400, 'only S256');
  assert.equal((await fetch(authorizeUrl({ challenge, state: '' }))).status, 400, 'state is required');
  const two = await fetch(authorizeUrl({ challenge, hash: sha256('a') }, { numSignatures: '2' }));
  assert.equal(two.status, 400, 'numSignatures must be 1');
  const html = await (await fetch(authorizeUrl({ challenge }))).text();
  assert.equal((await post('/oauth2/login', { flow: flowOf(html), otp: '000000x' })).status, 401, 'bad login code');
  const loginCode = p.loginCode('alice');
  assert.equal((await post('/oauth2/login', { flow: flowOf(html), otp: loginCode })).status, 200);
  const html2 = await (await fetch(authorizeUrl({ challenge }))).text();
  assert.equal((await post('/oauth2/login', { flow: flowOf(html2), otp: loginCode })).status, 401, 'codes once');

  const hash = sha256('the authorized revision');
  const token = await tokenFor({ hash });
  const other = await signHash(token, sha256('another revision'));
  assert.equal(other.status, 400, 'a hash the token does not name is refused');
  assert.equal((await signHash('', hash)).status, 401, 'missing bearer');
  assert.equal((await signHash('forged', hash)).status, 401, 'unknown bearer');
  assert.equal((await csc('credentials/list', {})).status, 401, 'list needs a bearer too');
  assert.equal((await signHash(token, hash, 'bob')).status, 400, "alice's token cannot use bob's credential");
  assert.equal((await signHash(token, hash)).status, 200, 'the authorized hash still signs');
});

test('csc provider: each failure switch is observable at its step', async (t) => {
  t.after(() => (p.fail = null));
  p.fail = 'cancel';
  const back = await authorize({ challenge: pkce().challenge, state: 's-cancel' });
  assert.equal(back.get('error'), 'access_denied');
  assert.equal(back.get('state'), 's-cancel');
  assert.equal(back.get('code'), null);
  p.fail = null;
  const denied = await authorize({ challenge: pkce().challenge, decision: 'deny' });
  assert.equal(denied.get('error'), 'access_denied', 'the signer can cancel too');

  p.fail = 'token_refused';
  const { verifier, challenge } = pkce();
  const refused = await exchange((await authorize({ challenge })).get('code')!, verifier);
  assert.equal(refused.status, 400);
  assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');

  p.fail = null;
  const service = await tokenFor();
  p.fail = 'down';
  assert.equal((await csc('info', {})).status, 503);
  assert.equal((await fetch(authorizeUrl({ challenge }))).status, 503);
  assert.equal((await csc('credentials/list', {}, service)).status, 503);

  p.fail = null;
  const crlDer = await file(new Uint8Array(await (await fetch(`${p.url}/pki/crl.der`)).arrayBuffer()));
  const crl = join(tmp.path, 'crl.pem');
  assert.equal((await run('openssl', ['crl', '-inform', 'DER', '-in', crlDer, '-out', crl])).code, 0, 'a DER CRL');
  const check = async (leaf: string) => {
    const args = ['verify', '-crl_check', '-CRLfile', crl, '-CAfile', await file(p.caPem)];
    return run('openssl', [...args, await file(pem(leaf))]);
  };
  {
    const ok = await check((await credentialInfo()).cert.certificates[0]!);
    assert.equal(ok.code, 0, ok.stderr + ok.stdout);
  }
  p.fail = 'expired_cert';
  const expired = await credentialInfo();
  assert.equal(expired.cert.status, 'expired');
  assert.match((await check(expired.cert.certificates[0]!)).stderr, /expired/);
  p.fail = 'revoked_cert';
  const revoked = await credentialInfo();
  assert.equal(revoked.cert.status, 'revoked');
  assert.match((await check(revoked.cert.certificates[0]!)).stderr, /revoked/);
  p.fail = 'not_qualified';
  const plain = await credentialInfo();
  assert.equal(plain.cert.status, 'valid');
  assert.ok(!hexOf(plain.cert.certificates[0]!).includes(QC.compliance), 'no QC statements');

  p.fail = 'bad_signature';
  const hash = sha256('a revision');
  const signed = await signHash(await tokenFor({ hash }), hash);
  assert.equal(signed.status, 200);
  const leaf = (await credentialInfo()).cert.certificates[0]!;
  assert.ok(!(await verifies(leaf, hash, signed.body.signatures[0]!)), 'the returned signature does not verify');
});

test('csc provider: an ECDSA P-256 credential signs with ecdsa-with-SHA256', async (t) => {
  const ec = await startCscProvider({ key: 'p256' });
  t.after(() => ec.close());
  const { verifier, challenge } = pkce();
  const hash = sha256('an ECDSA-signed revision');
  const q = new URLSearchParams({ response_type: 'code', client_id: ec.clientId, redirect_uri: REDIRECT,
    code_challenge: challenge, code_challenge_method: 'S256', state: 's', scope: 'credential',
    credentialID: ec.credentialId(), numSignatures: '1', hashes: b64url(hash), hashAlgorithmOID: SHA256_OID }); // prettier-ignore
  const html = await (await fetch(`${ec.url}/oauth2/authorize?${q}`)).text();
  const form = (path: string, f: Record<string, string>) =>
    fetch(`${ec.url}${path}`, { method: 'POST', body: new URLSearchParams(f), redirect: 'manual' });
  const consent = await (await form('/oauth2/login', { flow: flowOf(html), otp: ec.loginCode() })).text();
  const back = await form('/oauth2/consent', { flow: flowOf(consent), decision: 'approve' });
  const code = new URL(back.headers.get('location')!).searchParams.get('code')!;
  const tok = await form('/oauth2/token', { grant_type: 'authorization_code', code, code_verifier: verifier,
    redirect_uri: REDIRECT, client_id: ec.clientId, client_secret: ec.clientSecret }); // prettier-ignore
  const { access_token } = (await tok.json()) as { access_token: string };
  const call = (method: string, body: object) =>
    fetch(`${ec.cscUrl}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
  const info = (await call('credentials/info', { credentialID: ec.credentialId() })) as unknown as Info;
  assert.deepEqual(info.key.algo, [...SIGN_ALGOS.p256]);
  const sign = { credentialID: ec.credentialId(), hashes: [hash.toString('base64')], hashAlgorithmOID: SHA256_OID };
  const rsa = await call('signatures/signHash', { ...sign, signAlgo: SIGN_ALGOS.rsa[1] });
  assert.equal(rsa.error, 'invalid_request', 'signAlgo must match the key');
  const signed = await call('signatures/signHash', { ...sign, signAlgo: SIGN_ALGOS.p256[1] });
  assert.ok(
    await verifies(info.cert.certificates[0]!, hash, (signed.signatures as string[])[0]!),
    'openssl verifies ECDSA',
  );
});
