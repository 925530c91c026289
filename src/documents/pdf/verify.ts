// Verifying a signed PDF, as the caller's side: the report's shape and the worker task (verify.work.ts does the
// work, in the PDF workers, under a time limit). Nothing is stored. Verdicts: `invalid` when a signature's bytes or
// CMS do not verify, a certificate is revoked, or something beyond DSS and document timestamps changed after the
// last signature; `valid` when every signature and timestamp is intact and chains to a trusted anchor at the time
// that proves it; otherwise `indeterminate` (unsigned, unknown issuer, missing revocation data).
import { apiError } from '../../lib/errors.js';
import type { Problem } from '../../pki/problems.js';
import type { CertSummary } from '../../pki/cert-info.js';
import type { PadesLevel } from './long-term.js';
import { runPdfTaskOr } from './pool.js';

/**
 * `qes`: intact, trusted, and signed with a certificate qualified for signatures (QcCompliance and QcSSCD, QcType
 * esign when typed); `advanced`: any other CMS signature (PAdES/AdES), Signet's seal included; null for a document
 * timestamp. Only the certificate decides: the verifier does not know which signature is whose.
 */
export type SignatureLevel = 'qes' | 'advanced' | null;

export type VerifyTrust = { anchorsDer: Uint8Array[]; crlsDer: Uint8Array[]; nowMs: number };

export type SignatureReport = {
  kind: 'signature' | 'document_timestamp';
  field: string;
  /** The digest over its byte range matches and its CMS verifies. */
  intact: boolean;
  signer: CertSummary | null;
  /** The proven time (its timestamp) when there is one, else the claimed signing time. */
  signed_at: string | null;
  time_proven: boolean;
  trusted: boolean;
  level: SignatureLevel;
  problems: Problem[];
  /** SHA-256 of the file up to the end of this signature's revision. */
  revision_sha256: string;
};

export type PdfVerification = {
  verdict: 'valid' | 'invalid' | 'indeterminate';
  pades_level: PadesLevel | null;
  modified_after_signing: boolean;
  problems: Problem[];
  signatures: SignatureReport[];
};

/** A minute covers a large file's hashing and the certificate checks several times over. */
const VERIFY_TIMEOUT_MS = 60_000;

export const verifyPdf = (bytes: Uint8Array, trust: VerifyTrust): Promise<PdfVerification> =>
  runPdfTaskOr<PdfVerification>({ op: 'verify', bytes, trust }, VERIFY_TIMEOUT_MS, (kind) =>
    apiError('invalid_file', {
      meta: { reason: kind === 'timeout' ? 'the file could not be verified in time' : 'the file could not be read' },
    }),
  );
