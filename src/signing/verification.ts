// Signer verification's rules, pure (no I/O): which method a request asks for, whether its signer still has to pass
// it, and how a destination is masked in pages and audit entries. The sends and checks are verification.service.ts.
import { apiError } from '../lib/errors.js';
import type { RequestRow } from './signing.repo.js';

export type Method = 'email_code' | 'sms_code';

/** The request's verification method, or null when it has none (older rows and schemas included). */
export const methodOf = (r: Pick<RequestRow, 'verification'>): Method | null =>
  r.verification === 'email_code' || r.verification === 'sms_code' ? r.verification : null;

/** Whether the signer still has to enter a code before seeing or acting on the document. */
export const needsVerification = (r: Pick<RequestRow, 'verification' | 'verified_at'>): boolean =>
  methodOf(r) !== null && r.verified_at == null;

/** 403 verification_required until the signer passed; called by every signer route that shows or acts. */
export function assertVerified(r: Pick<RequestRow, 'verification' | 'verified_at'>): void {
  if (needsVerification(r)) throw apiError('verification_required', { meta: { verification: methodOf(r) } });
}

/** `a***@example.com`, `+49*******67`: enough for the signer to recognise, not enough to learn it. */
export function maskDestination(method: Method, r: Pick<RequestRow, 'email' | 'phone'>): string {
  if (method === 'sms_code') {
    const p = r.phone ?? '';
    return p.length > 6 ? `${p.slice(0, 3)}${'*'.repeat(p.length - 5)}${p.slice(-2)}` : '***';
  }
  const [local = '', domain = ''] = r.email.split('@');
  return `${local.slice(0, 1)}***@${domain}`;
}

/**
 * The code as typed or pasted, reduced to ASCII digits: spaces, dashes and invisible marks (a right-to-left mark
 * copied from an Arabic mail) go; full-width digits (a Japanese input method) and Arabic-Indic digits count.
 */
export function normalizeCode(input: string): string {
  return input
    .normalize('NFKC')
    .replace(/[\u0660-\u0669]/g, (d) => String(d.charCodeAt(0) - 0x0660))
    .replace(/[\u06f0-\u06f9]/g, (d) => String(d.charCodeAt(0) - 0x06f0))
    .replace(/[\s\p{Cf}-]/gu, '');
}
