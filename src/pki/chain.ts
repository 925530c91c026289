// Certificate path validation at a given time, against given trust anchors and CRLs, with nothing fetched.
// Guarantees: never throws (unreadable certificates and CRLs are ignored as if absent); `trusted` is true only for a
// path leaf..anchor whose every signature verifies, every certificate valid at `at`, CA certificates marked so
// (basicConstraints, keyCertSign, path length), the leaf's key usage fitting the purpose, and no certificate
// revoked at `at` by a CRL whose signature verifies with its issuer's key. Anchors are trusted as given: their own
// signature and revocation are not checked, their validity period is.
import type { KeyObject } from 'node:crypto';
import * as pkijs from 'pkijs';
import { publicKeyOf, verifySignedObject, weakness } from './algorithms.js';
import { authorityKeyId, basicConstraints, extKeyUsage, keyUsage, KU, nameText, subjectKeyId } from './cert-info.js';
import { ab, bytesEqual, OID, parseCert } from './cms.js';
import { addProblem, problem, type Problem } from './problems.js';

export type ChainPurpose = 'signature' | 'timestamp';

export type ChainOptions = {
  /** The time the path must be valid at (the signature's proven time, or now). */
  at: Date;
  /** Certificates that may be intermediates (e.g. those carried in the CMS and the DSS). */
  candidatesDer: Uint8Array[];
  crlsDer: Uint8Array[];
  anchorsDer: Uint8Array[];
  purpose: ChainPurpose;
};

export type ChainCheck = {
  trusted: boolean;
  /**
   * 'good' only when every non-anchor certificate has a CRL from its issuer (signature verified, not a delta CRL)
   * that is current at `at` (nextUpdate not before it) or issued after it, and none lists it as revoked at or
   * before `at`; 'revoked' when one does; else 'unknown'. A revocation dated after `at` does not count.
   */
  revocation: 'good' | 'revoked' | 'unknown';
  /** Leaf first, up to the anchor; when no path reaches an anchor, the longest partial path. */
  chainDer: Uint8Array[];
  problems: Problem[];
};

// Purposes a signing certificate's EKU may name: any, e-mail protection, document signing (RFC 9336),
// Adobe authentic documents, Microsoft document signing.
const SIGNING_EKUS = [
  '2.5.29.37.0',
  '1.3.6.1.5.5.7.3.4',
  '1.3.6.1.5.5.7.3.36',
  '1.2.840.113583.1.1.5',
  '1.3.6.1.4.1.311.10.3.12',
];
const MAX_DEPTH = 8;
const DELTA_CRL_INDICATOR = '2.5.29.27';
const REASON_CODE = '2.5.29.21';
const REMOVE_FROM_CRL = 8;

type Cert = { der: Uint8Array; c: pkijs.Certificate; anchor: boolean; key: KeyObject | null; subject: string };

export async function checkChain(leafDer: Uint8Array, opts: ChainOptions): Promise<ChainCheck> {
  try {
    return check(leafDer, opts);
  } catch {
    return {
      trusted: false,
      revocation: 'unknown',
      chainDer: [leafDer],
      problems: [problem('chain_incomplete', { subject: '' })],
    };
  }
}

function check(leafDer: Uint8Array, opts: ChainOptions): ChainCheck {
  const pool: Cert[] = [];
  const add = (der: Uint8Array, anchor: boolean) => {
    const known = pool.find((x) => bytesEqual(x.der, der));
    if (known) known.anchor ||= anchor;
    else {
      const c = tryParse(der);
      if (c) pool.push({ der, c, anchor, key: publicKeyOf(c), subject: nameText(c.subject) });
    }
  };
  opts.anchorsDer.forEach((d) => add(d, true));
  opts.candidatesDer.forEach((d) => add(d, false));
  const leafCert = tryParse(leafDer);
  if (!leafCert) return { trusted: false, revocation: 'unknown', chainDer: [], problems: [problem('cms_malformed')] };
  const leaf: Cert = pool.find((x) => bytesEqual(x.der, leafDer)) ?? {
    der: leafDer,
    c: leafCert,
    anchor: false,
    key: publicKeyOf(leafCert),
    subject: nameText(leafCert.subject),
  };

  const problems: Problem[] = [];
  const { path, complete } = buildPath(leaf, pool);
  if (!complete) addProblem(problems, problem('chain_incomplete', { subject: leaf.subject }));

  const at = opts.at.getTime();
  let fits = complete;
  path.forEach((cert, i) => {
    const { c, subject } = cert;
    if (at > c.notAfter.value.getTime()) {
      addProblem(problems, problem('cert_expired', { subject, not_after: c.notAfter.value.toISOString() }));
      fits = false;
    }
    if (at < c.notBefore.value.getTime()) {
      addProblem(problems, problem('cert_not_yet_valid', { subject, not_before: c.notBefore.value.toISOString() }));
      fits = false;
    }
    const ok = i === 0 ? leafFits(c, opts.purpose) : cert.anchor || caFits(c, i - 1);
    if (!ok) {
      addProblem(problems, problem('wrong_key_usage', { subject }));
      fits = false;
    }
    const issuer = path[i + 1];
    if (issuer && !cert.anchor) {
      const { alg } = verifySignedObject(c.tbsView, c.signatureAlgorithm, c.signatureValue, issuer.key);
      const weak = alg && weakness(alg, issuer.key);
      if (weak) addProblem(problems, problem('weak_algorithm', { algorithm: weak }));
    }
  });

  const revocation = complete ? revocationOf(path, opts, at, problems) : 'unknown';
  return {
    trusted: fits && revocation !== 'revoked',
    revocation,
    chainDer: path.map((x) => x.der),
    problems,
  };
}

function tryParse(der: Uint8Array): pkijs.Certificate | null {
  try {
    return parseCert(der);
  } catch {
    return null;
  }
}

/**
 * Depth-first search from the leaf through certificates whose subject is the current issuer (and whose key id
 * matches, when both sides name one) and whose key verifies the current certificate, anchors first.
 */
function buildPath(leaf: Cert, pool: Cert[]): { path: Cert[]; complete: boolean } {
  if (leaf.anchor) return { path: [leaf], complete: true };
  let best: Cert[] = [leaf];
  const verified = new Map<string, boolean>();
  const signs = (issuer: Cert, child: Cert) => {
    const id = `${pool.indexOf(issuer)}>${child === leaf ? 'leaf' : pool.indexOf(child)}`;
    let ok = verified.get(id);
    if (ok === undefined) {
      const { c } = child;
      ok = verifySignedObject(c.tbsView, c.signatureAlgorithm, c.signatureValue, issuer.key).outcome === 'valid';
      verified.set(id, ok);
    }
    return ok;
  };
  const walk = (path: Cert[]): Cert[] | null => {
    const cur = path[path.length - 1];
    if (path.length > best.length) best = path;
    if (cur.anchor) return path;
    if (path.length > MAX_DEPTH) return null;
    const aki = authorityKeyId(cur.c);
    const issuers = pool
      .filter((x) => !path.includes(x) && x.c.subject.isEqual(cur.c.issuer))
      .filter((x) => {
        const ski = aki && subjectKeyId(x.c);
        return !ski || ski === aki;
      })
      .sort((a, b) => Number(b.anchor) - Number(a.anchor));
    for (const issuer of issuers) {
      if (!signs(issuer, cur)) continue;
      const found = walk([...path, issuer]);
      if (found) return found;
    }
    return null;
  };
  const found = walk([leaf]);
  return found ? { path: found, complete: true } : { path: best, complete: false };
}

function leafFits(c: pkijs.Certificate, purpose: ChainPurpose): boolean {
  const ku = keyUsage(c);
  if (ku && !ku.has(KU.digitalSignature) && !ku.has(KU.nonRepudiation)) return false;
  const eku = extKeyUsage(c);
  // RFC 3161 §2.3: a TSA certificate carries the timeStamping purpose (and only it), critical.
  if (purpose === 'timestamp')
    return !!eku && eku.critical && eku.purposes.length === 1 && eku.purposes[0] === OID.timeStamping;
  return !eku || eku.purposes.some((p) => SIGNING_EKUS.includes(p));
}

/** A CA certificate with `below` CA certificates between it and the leaf. */
function caFits(c: pkijs.Certificate, below: number): boolean {
  const bc = basicConstraints(c);
  const ku = keyUsage(c);
  return bc.ca && (!ku || ku.has(KU.keyCertSign)) && (bc.pathLen === null || below <= bc.pathLen);
}

type Crl = { crl: pkijs.CertificateRevocationList; der: Uint8Array };

function revocationOf(path: Cert[], opts: ChainOptions, at: number, problems: Problem[]): ChainCheck['revocation'] {
  const crls: Crl[] = [];
  for (const der of opts.crlsDer) {
    try {
      crls.push({ crl: pkijs.CertificateRevocationList.fromBER(ab(der)), der });
    } catch {
      // Unreadable CRL: as if absent.
    }
  }
  let result: ChainCheck['revocation'] = 'good';
  for (let i = 0; i < path.length - 1; i++) {
    const cert = path[i];
    if (cert.anchor) break;
    const status = certStatus(cert, path[i + 1], crls, at);
    if (status.state === 'revoked') {
      addProblem(problems, problem('cert_revoked', { subject: cert.subject, revoked_at: status.revokedAt }));
      result = 'revoked';
    } else if (status.state === 'unknown') {
      addProblem(problems, problem('revocation_unknown', { subject: cert.subject }));
      if (result === 'good') result = 'unknown';
    }
  }
  return result;
}

type Status = { state: 'good' | 'unknown' } | { state: 'revoked'; revokedAt: string };

function certStatus(cert: Cert, issuer: Cert, crls: Crl[], at: number): Status {
  const issuerKu = keyUsage(issuer.c);
  if (issuerKu && !issuerKu.has(KU.cRLSign)) return { state: 'unknown' };
  let state: Status = { state: 'unknown' };
  for (const { crl } of crls) {
    if (!crl.issuer.isEqual(cert.c.issuer)) continue;
    if (crl.crlExtensions?.extensions.some((e) => e.extnID === DELTA_CRL_INDICATOR)) continue;
    const next = crl.nextUpdate?.value.getTime();
    const usable = crl.thisUpdate.value.getTime() >= at || next === undefined || next >= at;
    if (!usable) continue;
    if (verifySignedObject(crl.tbsView, crl.signature, crl.signatureValue, issuer.key).outcome !== 'valid') continue;
    const entry = (crl.revokedCertificates ?? []).find(
      (e) => e.userCertificate.isEqual(cert.c.serialNumber) && !removedFromCrl(e),
    );
    if (entry && entry.revocationDate.value.getTime() <= at)
      return { state: 'revoked', revokedAt: entry.revocationDate.value.toISOString() };
    state = { state: 'good' };
  }
  return state;
}

function removedFromCrl(entry: pkijs.RevokedCertificate): boolean {
  const reason = entry.crlEntryExtensions?.extensions.find((e) => e.extnID === REASON_CODE);
  const value = (reason?.parsedValue as { valueBlock?: { valueDec?: number } } | undefined)?.valueBlock?.valueDec;
  return value === REMOVE_FROM_CRL;
}
