// The PDF engine as features use it: one object over this folder's steps, each run in worker threads with a time
// limit (pool.ts). Passed into the app, so the signing flow does not depend on how PDFs are processed.
import { appendAuditPage, renderAuditCertificate, type AuditEvent, type AuditInfo } from './audit-page.js';
import { previewPlacement } from './anchors.js';
import { inspectPdf, type PdfInspection } from './ingest.js';
import { preparePdf, type PlacementInput, type PreparedPdf } from './placement.js';
import { stampPdf, type Stamp } from './stamp.js';
import { type PlacedTemplate, placeTemplate, type TemplatePlacementField } from './template-placement.js';
import type { Anchor, Problem } from './types.js';

export type PdfEngine = {
  inspect(bytes: Uint8Array): Promise<PdfInspection>;
  prepare(bytes: Uint8Array, input: PlacementInput): Promise<PreparedPdf>;
  preview(bytes: Uint8Array, roles?: readonly string[]): Promise<{ anchors: Anchor[]; problems: Problem[] }>;
  placeTemplate(bytes: Uint8Array, fields: TemplatePlacementField[]): Promise<PlacedTemplate>;
  stamp(bytes: Uint8Array, stamps: Stamp[]): Promise<Uint8Array>;
  appendAuditPage(bytes: Uint8Array, audit: AuditInfo): Promise<Uint8Array>;
  auditCertificate(audit: AuditInfo, events: AuditEvent[]): Promise<Uint8Array>;
};

export const pdfEngine: PdfEngine = {
  inspect: (bytes) => inspectPdf(bytes),
  prepare: (bytes, input) => preparePdf(bytes, input),
  preview: (bytes, roles) => previewPlacement(bytes, roles),
  placeTemplate: (bytes, fields) => placeTemplate(bytes, fields),
  stamp: (bytes, stamps) => stampPdf(bytes, stamps),
  appendAuditPage: (bytes, audit) => appendAuditPage(bytes, audit),
  auditCertificate: (audit, events) => renderAuditCertificate({ ...audit, events }),
};
