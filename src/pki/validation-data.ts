// Where the revocation data for a seal's and a timestamp's certificates comes from. Certificates the local CA issued
// get a CRL issued on the spot (so its thisUpdate follows every timestamp taken before the call); anything else
// (a SEAL_P12 chain, an external TSA) goes to the fetcher of the issuers' published CRLs, when there is one. A chain
// is complete when every certificate that is not self-signed has data; otherwise the reasons say what is missing.
import * as pkijs from 'pkijs';
import type { Clock } from '../lib/clock.js';
import { nameText } from './cert-info.js';
import { parseCert } from './cms.js';
import { issueCrl, type CrlIssuer } from './crl.js';

export type ChainRevocation = { crlsDer: Uint8Array[]; complete: boolean; missing: string[] };

export type ValidationSource = {
  /** Revocation data for each chain (leaf first), as of now. */
  forChains(chains: Uint8Array[][]): Promise<ChainRevocation>;
};

/** What fetches foreign issuers' CRLs (pki/revocation-fetch.ts). */
export type ForeignRevocation = {
  fetchFor(chainDer: Uint8Array[]): Promise<{
    crlsDer: Uint8Array[];
    complete: boolean;
    missing: { subject: string; reason: string }[];
  }>;
};

export function createValidationSource(opts: {
  /** The local CAs (every generation's); a certificate one of them issued gets that CA's fresh CRL. */
  cas: CrlIssuer[];
  clock: Clock;
  foreign?: ForeignRevocation;
}): ValidationSource {
  const cas = opts.cas.map((ca) => ({ ca, cert: parseCert(ca.caCertDer) }));
  const issuerOf = (c: pkijs.Certificate) => cas.find((x) => c.issuer.isEqual(x.cert.subject));
  // A CRL is dated to the second (crl.ts), so one issued earlier in the same second says the same: reuse it. The
  // order seal timestamp <= CRL <= document timestamp holds either way, and a seal saves two signings.
  const recent = new Map<CrlIssuer, { second: number; der: Promise<Uint8Array> }>();
  const crlOf = (ca: CrlIssuer) => {
    const second = Math.floor(opts.clock.now() / 1000);
    let r = recent.get(ca);
    if (!r || r.second !== second) recent.set(ca, (r = { second, der: issueCrl(ca, opts.clock.now()) }));
    return r.der;
  };
  return {
    async forChains(chains) {
      const crls: Uint8Array[] = [];
      const missing: string[] = [];
      const issued = new Map<CrlIssuer, Uint8Array>();
      for (const chain of chains) {
        const certs = chain.map(parsed);
        const foreign = certs.filter((c) => !isSelfSigned(c) && !issuerOf(c));
        for (const c of certs) {
          const own = isSelfSigned(c) ? undefined : issuerOf(c);
          if (!own) continue;
          if (!issued.has(own.ca)) issued.set(own.ca, await crlOf(own.ca));
          crls.push(issued.get(own.ca)!);
        }
        if (foreign.length === 0) continue;
        if (!opts.foreign) {
          for (const c of foreign) missing.push(`${nameText(c.subject)}: no revocation source configured`);
          continue;
        }
        const got = await opts.foreign.fetchFor(chain);
        crls.push(...got.crlsDer);
        for (const m of got.missing) missing.push(`${m.subject}: ${m.reason}`);
      }
      const unique = [...new Map(crls.map((c) => [Buffer.from(c).toString('base64'), c])).values()];
      return { crlsDer: unique, complete: missing.length === 0, missing };
    },
  };
}

const isSelfSigned = (c: pkijs.Certificate) => c.issuer.isEqual(c.subject);

// The same few certificates (seal, TSA, CAs) come by on every seal: parse each once.
const parsedCerts = new Map<string, pkijs.Certificate>();
function parsed(der: Uint8Array): pkijs.Certificate {
  const key = Buffer.from(der).toString('base64');
  let c = parsedCerts.get(key);
  if (!c) {
    if (parsedCerts.size >= 64) parsedCerts.clear();
    parsedCerts.set(key, (c = parseCert(der)));
  }
  return c;
}
