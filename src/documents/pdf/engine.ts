// The PDF engine as features use it: one object over this folder's steps, each run in worker threads with a time
// limit (pool.ts). Passed into the app, so the signing flow does not depend on how PDFs are processed.
// The step modules imported here are the calling thread's side only (checks, failure mapping, the task to send):
// none loads a PDF library (pdf-lib, fontkit, pdf.js), which only the worker side (*.work.ts, through
// pdf.worker.ts) does, so they load at start for next to nothing (engine.test.ts checks the main thread).
import { type AuditEvent, type AuditInfo, appendAuditPage, renderAuditCertificate } from './audit-page.js';
import { previewPlacement } from './anchors.js';
import { inspectPdf, type PdfInspection } from './ingest.js';
import { type PlacementInput, type PreparedPdf, preparePdf } from './placement.js';
import { type Stamp, stampPdf } from './stamp.js';
import {
  findTemplateMarkers,
  type PlacedTemplate,
  placeTemplate,
  type TemplateMarker,
  type TemplatePlacementField,
} from './template-placement.js';
import type { Anchor, Problem } from './types.js';
import { verifyPdf, type PdfVerification, type VerifyTrust } from './verify.js';

export type PdfEngine = {
  inspect(bytes: Uint8Array): Promise<PdfInspection>;
  prepare(bytes: Uint8Array, input: PlacementInput): Promise<PreparedPdf>;
  preview(bytes: Uint8Array, roles?: readonly string[]): Promise<{ anchors: Anchor[]; problems: Problem[] }>;
  placeTemplate(bytes: Uint8Array, fields: TemplatePlacementField[]): Promise<PlacedTemplate>;
  /** The `{{…}}` markers a new template's PDF offers as fields. */
  templateMarkers(bytes: Uint8Array): Promise<{ markers: TemplateMarker[]; hasText: boolean; pageCount: number }>;
  /** `incremental`: append to the input (signatures in it keep verifying) instead of rewriting it. */
  stamp(bytes: Uint8Array, stamps: Stamp[], opts?: { incremental?: boolean }): Promise<Uint8Array>;
  appendAuditPage(bytes: Uint8Array, audit: AuditInfo, opts?: { incremental?: boolean }): Promise<Uint8Array>;
  auditCertificate(audit: AuditInfo, events: AuditEvent[]): Promise<Uint8Array>;
  verify(bytes: Uint8Array, trust: VerifyTrust): Promise<PdfVerification>;
};

export const pdfEngine: PdfEngine = {
  inspect: (bytes) => inspectPdf(bytes),
  prepare: (bytes, input) => preparePdf(bytes, input),
  preview: (bytes, roles) => previewPlacement(bytes, roles),
  placeTemplate: (bytes, fields) => placeTemplate(bytes, fields),
  templateMarkers: (bytes) => findTemplateMarkers(bytes),
  stamp: (bytes, stamps, opts) => stampPdf(bytes, stamps, { incremental: opts?.incremental }),
  appendAuditPage: (bytes, audit, opts) => appendAuditPage(bytes, audit, { incremental: opts?.incremental }),
  auditCertificate: (audit, events) => renderAuditCertificate({ ...audit, events }),
  verify: (bytes, trust) => verifyPdf(bytes, trust),
};
