// The signing module's view of its collaborators (PDF engine, mail queue, sealer): small interfaces, so the state
// machine does not depend on how PDFs are processed or mail is sent, and app.ts wires the real ones.
import type { Mailer } from '../mail/mailer.js';

export type PlacementField = { id: string; role: string; type: 'signature' | 'initials' | 'date' | 'text'; page: number; x: number; y: number; width: number; height: number };

export type PrepareInput =
  | { mode: 'anchors'; roles: string[] }
  | { mode: 'auto_append'; signers: Array<{ role: string; name: string; email: string }> }
  | { mode: 'coordinates'; roles: string[]; fields: Array<{ role: string; type: string; page: number; x: number; y: number; width: number; height: number }> };

export type StampValue =
  | { kind: 'typed'; text: string }
  | { kind: 'drawn'; png: Uint8Array }
  | { kind: 'date'; text: string }
  | { kind: 'text'; text: string };

export type AuditPageInput = {
  documentId: string;
  title: string;
  originalSha256: string;
  signers: Array<{ name: string; email: string; role: string; ip: string | null; userAgent: string | null; sentAt: string | null; viewedAt: string | null; signedAt: string | null }>;
  completedAt: string;
};

export type PdfEngine = {
  inspect(bytes: Uint8Array): Promise<{ pageCount: number; sha256: string }>;
  prepare(bytes: Uint8Array, input: PrepareInput): Promise<{ pdf: Uint8Array; fields: PlacementField[]; pageCount: number }>;
  preview(bytes: Uint8Array, roles?: string[]): Promise<{ anchors: unknown[]; problems: Array<{ code: string; message: string; meta?: Record<string, unknown> }> }>;
  stamp(bytes: Uint8Array, stamps: Array<{ field: PlacementField; value: StampValue }>): Promise<Uint8Array>;
  appendAuditPage(bytes: Uint8Array, audit: AuditPageInput): Promise<Uint8Array>;
  auditCertificate(audit: AuditPageInput, entries: Array<Record<string, unknown>>): Promise<Uint8Array>;
};

/** The mail outbox as the state machine uses it: queue inside a transaction, then nudge the sender. */
export type MailQueue = Pick<Mailer, 'enqueue' | 'wake'>;

export type SealResult = { pdf: Uint8Array; certSerial: string; tsaProvider: string; tsaSignedAt: string };
export type Sealer = { seal(pdf: Uint8Array, meta: { name?: string; reason?: string; location?: string }): Promise<SealResult> };
