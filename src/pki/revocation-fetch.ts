// Revocation data for certificates Signet did not issue (a SEAL_P12 identity, an external TSA_URL's signer), so a
// seal can reach B-LT/B-LTA where the issuer publishes CRLs. Guarantees:
// - a CRL is returned only when it is signed by the certificate's issuer (found in the given chain), current by the
//   injected clock (thisUpdate <= now < nextUpdate), complete in scope (no delta, partial or indirect CRL) and does
//   not list the certificate; anything else becomes a plain-English reason in `missing`, never an exception;
// - every download goes through the outbound guard (each redirect hop re-checked, addresses checked again at connect
//   time), with a size limit, a redirect limit and a deadline;
// - verified CRLs are cached in memory by URL until their nextUpdate (bounded), and concurrent requests for one URL
//   share one download, so a burst of seals fetches once.
// Only CRLs over http(s): ldap distribution points are ignored and OCSP is out of scope (a responder's answer would
// need its own signer checks; CRLs are what the DSS takes without that).
import * as asn1js from 'asn1js';
import * as x509 from '@peculiar/x509';
import * as pkijs from 'pkijs';
import type { Agent } from 'undici';
import type { Clock } from '../lib/clock.js';
import { ab, sha256, toHex } from './cms.js';
import { boundedGet, createGuardedAgent } from '../lib/outbound.js';
import {
  CRL_CACHE_MAX_BYTES,
  CRL_CACHE_MAX_ENTRIES,
  CRL_CLOCK_SKEW_MS,
  CRL_FETCH_TIMEOUT_MS,
  CRL_MAX_REDIRECTS,
  MAX_CRL_BYTES,
} from '../limits.js';

/** The `missing` reason of a certificate its issuer's CRL revokes (that CRL is not returned). */
export const REVOKED_REASON = 'certificate revoked';

export type RevocationResult = {
  /** One verified, current CRL per non-self-signed certificate of the chain, deduplicated. */
  crlsDer: Uint8Array[];
  /** True when every non-self-signed certificate got one. */
  complete: boolean;
  /** Why a certificate got no CRL, in plain English, one entry per such certificate. */
  missing: { subject: string; reason: string }[];
};

export type RevocationFetcher = {
  /** `chainDer`: leaf first, up to and including the root when known. Never rejects. */
  fetchFor(chainDer: Uint8Array[]): Promise<RevocationResult>;
  close(): Promise<void>;
};

export type RevocationFetcherOptions = {
  clock: Clock;
  allowPrivateNetwork: boolean;
  timeoutMs?: number;
  maxBytes?: number;
};

type Parsed = {
  url: string;
  der: Uint8Array;
  crl: x509.X509Crl;
  nextUpdate: number | null;
  /** The issuer public key whose signature over the CRL was checked. */
  signerKey: string;
};
type Download = { ok: true; crl: Parsed } | { ok: false; reason: string };

const EXT = {
  crlNumber: '2.5.29.20',
  deltaCrlIndicator: '2.5.29.27',
  issuingDistributionPoint: '2.5.29.28',
  authorityKeyIdentifier: '2.5.29.35',
  freshestCrl: '2.5.29.46',
} as const;
const KNOWN_CRL_EXTENSIONS = new Set<string>(Object.values(EXT));

export function createRevocationFetcher(opts: RevocationFetcherOptions): RevocationFetcher {
  const agent: Agent = createGuardedAgent({ allowPrivateNetwork: opts.allowPrivateNetwork, connections: 4 });
  const timeoutMs = opts.timeoutMs ?? CRL_FETCH_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? MAX_CRL_BYTES;
  // Map order is recency: a hit moves its entry to the end, eviction takes from the front.
  const cache = new Map<string, Parsed>();
  let cachedBytes = 0;
  const inFlight = new Map<string, Promise<Download>>();

  const forget = (url: string) => {
    const old = cache.get(url);
    if (old === undefined) return;
    cache.delete(url);
    cachedBytes -= old.der.byteLength;
  };

  const remember = (entry: Parsed) => {
    forget(entry.url);
    if (entry.der.byteLength > CRL_CACHE_MAX_BYTES) return;
    cache.set(entry.url, entry);
    cachedBytes += entry.der.byteLength;
    for (const url of cache.keys()) {
      if (cache.size <= CRL_CACHE_MAX_ENTRIES && cachedBytes <= CRL_CACHE_MAX_BYTES) break;
      forget(url);
    }
  };

  const cached = (url: string): Parsed | undefined => {
    const entry = cache.get(url);
    if (entry === undefined) return undefined;
    if (entry.nextUpdate === null || opts.clock.now() >= entry.nextUpdate) {
      forget(url);
      return undefined;
    }
    cache.delete(url);
    cache.set(url, entry);
    return entry;
  };

  // One download per URL at a time: callers arriving while it runs wait for the same answer, which is in the cache
  // (when verified and current) before the promise settles, so no later caller can slip between the two. The
  // download is verified against the first caller's issuer; crlFor checks again for a caller with another one.
  const download = (url: string, issuer: x509.X509Certificate): Promise<Download> => {
    const running = inFlight.get(url);
    if (running !== undefined) return running;
    const started = fetchVerified(url, issuer).finally(() => inFlight.delete(url));
    inFlight.set(url, started);
    return started;
  };

  async function fetchVerified(url: string, issuer: x509.X509Certificate): Promise<Download> {
    const got = await fetchBody(agent, url, { allowPrivateNetwork: opts.allowPrivateNetwork, timeoutMs, maxBytes });
    if (!got.ok) return got;
    const crl = parseCrl(got.body);
    if (crl === null) return { ok: false, reason: `CRL from ${url} does not parse` };
    const entry: Parsed = {
      url,
      der: new Uint8Array(crl.rawData),
      crl,
      nextUpdate: crl.nextUpdate?.getTime() ?? null,
      signerKey: keyOf(issuer),
    };
    const problem = await issuerProblem(entry, issuer);
    if (problem !== null) return { ok: false, reason: problem };
    if (entry.nextUpdate !== null && opts.clock.now() < entry.nextUpdate) remember(entry);
    return { ok: true, crl: entry };
  }

  /** The CRL for one certificate, or why there is none. */
  async function crlFor(cert: x509.X509Certificate, issuer: x509.X509Certificate): Promise<Download> {
    const urls = distributionUrls(cert);
    if (urls.length === 0) return { ok: false, reason: 'no CRL distribution point' };
    const reasons: string[] = [];
    for (const url of urls) {
      let entry = cached(url);
      if (entry === undefined) {
        const got = await download(url, issuer);
        if (!got.ok) {
          reasons.push(got.reason);
          continue;
        }
        entry = got.crl;
      }
      // A cached CRL checked against another issuer's key (the same URL in two chains) is checked again here.
      const problem =
        (entry.signerKey === keyOf(issuer) ? null : await issuerProblem(entry, issuer)) ??
        currentProblem(entry, cert, opts.clock.now());
      if (problem !== null) {
        reasons.push(problem);
        continue;
      }
      // A current CRL from the right issuer that lists the certificate is the answer: no other source overrides it.
      if (entry.crl.findRevoked(cert) !== null) return { ok: false, reason: REVOKED_REASON };
      return { ok: true, crl: entry };
    }
    return { ok: false, reason: [...new Set(reasons)].join('; ') };
  }

  return {
    async fetchFor(chainDer) {
      const result: RevocationResult = { crlsDer: [], complete: true, missing: [] };
      const miss = (subject: string, reason: string) => {
        result.complete = false;
        result.missing.push({ subject, reason });
      };
      if (chainDer.length === 0) {
        miss('', 'no certificates given');
        return result;
      }
      const chain: (x509.X509Certificate | null)[] = chainDer.map((der) => {
        try {
          return new x509.X509Certificate(ab(der));
        } catch {
          return null;
        }
      });
      const seen = new Set<string>();
      for (const [i, cert] of chain.entries()) {
        if (cert === null) {
          miss(`certificate ${i + 1} of the chain`, 'certificate does not parse');
          continue;
        }
        try {
          if (await cert.isSelfSigned()) continue;
          const issuer = await findIssuer(cert, chain);
          const got =
            issuer === null
              ? ({ ok: false, reason: 'issuer certificate not in the chain' } as const)
              : await crlFor(cert, issuer);
          if (!got.ok) {
            miss(cert.subject, got.reason);
            continue;
          }
          const key = toHex(sha256(got.crl.der)); // two URLs may serve the same CRL
          if (!seen.has(key)) {
            seen.add(key);
            result.crlsDer.push(got.crl.der);
          }
        } catch {
          // Unusual key or signature algorithms can make the crypto layer throw; that is missing data, not a fault.
          miss(cert.subject, 'certificate or CRL uses an unsupported algorithm');
        }
      }
      return result;
    },
    async close() {
      cache.clear();
      cachedBytes = 0;
      await agent.close();
    },
  };
}

/** http(s) URIs of the certificate's full-scope distribution points, in order (ldap and the like are skipped). */
function distributionUrls(cert: x509.X509Certificate): string[] {
  const ext = cert.getExtension(x509.CRLDistributionPointsExtension);
  const urls: string[] = [];
  for (const dp of ext?.distributionPoints ?? []) {
    // A point limited to some reasons, or served by another CRL issuer, cannot alone show the certificate unrevoked.
    if (dp.reasons !== undefined || dp.cRLIssuer !== undefined) continue;
    for (const name of dp.distributionPoint?.fullName ?? []) {
      const uri = name.uniformResourceIdentifier;
      if (uri !== undefined && /^https?:\/\//i.test(uri) && !urls.includes(uri)) urls.push(uri);
    }
  }
  return urls;
}

/** The chain's certificate that signed `cert` (matching name and a signature that verifies), or null. */
async function findIssuer(
  cert: x509.X509Certificate,
  chain: (x509.X509Certificate | null)[],
): Promise<x509.X509Certificate | null> {
  for (const candidate of chain) {
    if (candidate === null || candidate === cert || candidate.subject !== cert.issuer) continue;
    const ok = await cert.verify({ publicKey: candidate.publicKey, signatureOnly: true }).catch(() => false);
    if (ok) return candidate;
  }
  return null;
}

const keyOf = (cert: x509.X509Certificate): string => Buffer.from(cert.publicKey.rawData).toString('base64');

/** Why this CRL is not `issuer`'s (name, key usage, signature), or null when it is. */
async function issuerProblem(entry: Parsed, issuer: x509.X509Certificate): Promise<string | null> {
  const { crl } = entry;
  if (crl.issuer !== issuer.subject) return `CRL from ${entry.url} is issued by ${crl.issuer}, not ${issuer.subject}`;
  const usage = issuer.getExtension(x509.KeyUsagesExtension);
  if (usage !== null && (usage.usages & x509.KeyUsageFlags.cRLSign) === 0) return 'issuer may not sign CRLs';
  const signed = await crl.verify({ publicKey: issuer.publicKey }).catch(() => false);
  return signed ? null : 'CRL signature invalid';
}

/** Why this (issuer-verified) CRL cannot vouch for `cert` at `now`, or null; revocation is the caller's check. */
function currentProblem(entry: Parsed, cert: x509.X509Certificate, now: number): string | null {
  const scope = scopeProblem(entry.crl, cert);
  if (scope !== null) return scope;
  // An issuer whose clock runs a little ahead of ours (one making its CRL on the spot) is not refused for it.
  if (entry.crl.thisUpdate.getTime() > now + CRL_CLOCK_SKEW_MS) return 'CRL not yet valid';
  if (entry.nextUpdate === null) return 'CRL has no nextUpdate';
  if (now >= entry.nextUpdate) return 'CRL expired';
  return null;
}

/** A delta, partial or indirect CRL, or one for the other kind of certificate, does not cover `cert` completely. */
function scopeProblem(crl: x509.X509Crl, cert: x509.X509Certificate): string | null {
  for (const ext of crl.extensions) {
    if (ext.type === EXT.deltaCrlIndicator) return 'delta CRL (no base CRL)';
    if (ext.critical && !KNOWN_CRL_EXTENSIONS.has(ext.type))
      return `CRL has an unsupported critical extension ${ext.type}`;
  }
  const idpExt = crl.extensions.find((e) => e.type === EXT.issuingDistributionPoint);
  if (idpExt === undefined) return null;
  let idp: pkijs.IssuingDistributionPoint;
  try {
    idp = new pkijs.IssuingDistributionPoint({ schema: asn1js.fromBER(idpExt.value).result });
  } catch {
    return 'CRL issuing distribution point does not parse';
  }
  if (idp.indirectCRL) return 'indirect CRL';
  if (idp.onlySomeReasons !== undefined) return 'partial CRL (some reasons only)';
  if (idp.onlyContainsAttributeCerts) return 'CRL covers attribute certificates only';
  const isCa = cert.getExtension(x509.BasicConstraintsExtension)?.ca === true;
  if (idp.onlyContainsUserCerts && isCa) return 'CRL covers end-entity certificates only';
  if (idp.onlyContainsCACerts && !isCa) return 'CRL covers CA certificates only';
  return null;
}

/** DER, or PEM ("-----BEGIN X509 CRL-----"); null when neither parses. */
function parseCrl(body: Uint8Array): x509.X509Crl | null {
  try {
    const head = Buffer.from(body.subarray(0, 64)).toString('latin1').trimStart();
    if (head.startsWith('-----BEGIN')) {
      const text = Buffer.from(body).toString('latin1');
      const block = /-----BEGIN X509 CRL-----[\s\S]+?-----END X509 CRL-----/.exec(text);
      return block === null ? null : new x509.X509Crl(block[0]);
    }
    return new x509.X509Crl(ab(body));
  } catch {
    return null;
  }
}

type Body = { ok: true; body: Uint8Array } | { ok: false; reason: string };

/** GET under the outbound rule (lib/outbound.ts boundedGet), its failures in the words of a CRL reason. */
async function fetchBody(
  agent: Agent,
  url: string,
  opts: { allowPrivateNetwork: boolean; timeoutMs: number; maxBytes: number },
): Promise<Body> {
  const r = await boundedGet(agent, url, {
    allowPrivateNetwork: opts.allowPrivateNetwork,
    maxRedirects: CRL_MAX_REDIRECTS,
    maxBytes: opts.maxBytes,
    timeoutMs: opts.timeoutMs,
    signal: AbortSignal.timeout(opts.timeoutMs),
    headers: {
      accept: 'application/pkix-crl, application/x-pkcs7-crl, */*;q=0.5',
      'user-agent': 'Signet/1.0 (CRL fetch)',
    },
  });
  if (r.ok) return r;
  switch (r.problem) {
    // The reason names the check, not the URL: a rejected URL may carry credentials.
    case 'bad_url':
      return { ok: false, reason: `unusable CRL URL (${r.reason})` };
    case 'refused': {
      const refused = /not a public address/.test(r.reason);
      return { ok: false, reason: `${refused ? 'refused address' : 'unreachable'}: ${r.reason} (${r.url})` };
    }
    case 'transport':
      return { ok: false, reason: transportReason(r.error, r.url) };
    case 'status':
      return { ok: false, reason: `http ${r.status} from ${r.url}` };
    case 'too_large':
      return { ok: false, reason: `CRL from ${r.url} is larger than ${opts.maxBytes} bytes` };
    case 'redirects':
      return { ok: false, reason: `more than ${CRL_MAX_REDIRECTS} redirects from ${url}` };
  }
}

function transportReason(err: unknown, url: string): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e.code === 'SIGNET_REFUSED_ADDRESS' || e.cause?.code === 'SIGNET_REFUSED_ADDRESS')
    return `refused address (${url})`;
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /timeout/i.test(e.code ?? ''))
    return `timed out fetching ${url}`;
  return `could not fetch ${url}`;
}
