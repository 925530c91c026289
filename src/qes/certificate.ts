// Whether a provider's credential may make a qualified signature now. Guarantees: refused (with the reason the
// signer and the audit trail are told) when the certificate has expired or is not yet valid, is not qualified for
// signatures on a qualified device (QC statements), does not chain to the provider's configured CA (QES_CA_FILE),
// or its issuer's CRL lists it; when revocation cannot be checked, nothing is signed and the signer may retry.
import { certSummary, isQualifiedForSignatures, type CertSummary } from '../pki/cert-info.js';
import { checkChain } from '../pki/chain.js';
import { parseCert } from '../pki/cms.js';
import { REVOKED_REASON, type RevocationFetcher } from '../pki/revocation-fetch.js';

export type CertRefusal =
  'cert_expired' | 'cert_not_qualified' | 'cert_untrusted' | 'cert_revoked' | 'revocation_unknown';

export type CertCheck =
  | { ok: true; summary: CertSummary; crlsDer: Uint8Array[] }
  | { ok: false; summary: CertSummary | null; reason: CertRefusal };

export async function checkCredentialCert(
  chainDer: Uint8Array[],
  o: { anchorsDer: Uint8Array[]; revocation: RevocationFetcher; now: number },
): Promise<CertCheck> {
  let leaf;
  try {
    leaf = parseCert(chainDer[0]!);
  } catch {
    return { ok: false, summary: null, reason: 'cert_untrusted' };
  }
  const summary = certSummary(leaf);
  const at = new Date(o.now);
  if (leaf.notBefore.value > at || leaf.notAfter.value < at) return { ok: false, summary, reason: 'cert_expired' };
  if (!isQualifiedForSignatures(leaf)) return { ok: false, summary, reason: 'cert_not_qualified' };
  const revocation = await o.revocation.fetchFor(chainDer);
  // The fetcher keeps no CRL that revokes a certificate it was asked about; it says so instead.
  if (revocation.missing.some((m) => m.reason === REVOKED_REASON))
    return { ok: false, summary, reason: 'cert_revoked' };
  const chain = await checkChain(chainDer[0]!, {
    at,
    candidatesDer: chainDer.slice(1),
    crlsDer: revocation.crlsDer,
    anchorsDer: o.anchorsDer,
    purpose: 'signature',
  });
  if (chain.revocation === 'revoked') return { ok: false, summary, reason: 'cert_revoked' };
  if (!chain.trusted) return { ok: false, summary, reason: 'cert_untrusted' };
  if (chain.revocation !== 'good') return { ok: false, summary, reason: 'revocation_unknown' };
  return { ok: true, summary, crlsDer: revocation.crlsDer };
}
