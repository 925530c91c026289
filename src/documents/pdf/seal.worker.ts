// Worker-thread half of sealing: the O(file) part (pdf-lib parse and save, hashing, signing). The private key
// arrives as a structured-cloned CryptoKey, so key bytes never appear in a message and stay non-extractable.
import type { PreparedSeal, SealKey, SealMeta } from './seal.js';
import { prepareSeal } from './seal.work.js';

export type SealJob = { pdf: Uint8Array; seal: SealKey; meta: SealMeta; signingTimeMs: number };

export function handle(job: SealJob): Promise<PreparedSeal> {
  return prepareSeal(job.pdf, job.seal, job.meta, job.signingTimeMs);
}
