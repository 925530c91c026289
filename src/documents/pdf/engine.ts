// The PDF engine as features use it: one object over this folder's steps, each run in worker threads with a time
// limit (pool.ts). Passed into the app, so the signing flow does not depend on how PDFs are processed.
import type { AuditEvent, AuditInfo } from './audit-page.js';
import type { PdfInspection } from './ingest.js';
import type { PlacementInput, PreparedPdf } from './placement.js';
import type { Stamp } from './stamp.js';
import type { PlacedTemplate, TemplatePlacementField } from './template-placement.js';
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

// The steps' modules also hold their worker side (pdf-lib, fontkit): they load on the first PDF call, not at start.
let steps: ReturnType<typeof loadSteps> | undefined;
const loadSteps = async () => ({
  ...(await import('./audit-page.js')),
  ...(await import('./anchors.js')),
  ...(await import('./ingest.js')),
  ...(await import('./placement.js')),
  ...(await import('./stamp.js')),
  ...(await import('./template-placement.js')),
});
const step = () => (steps ??= loadSteps());

export const pdfEngine: PdfEngine = {
  inspect: async (bytes) => (await step()).inspectPdf(bytes),
  prepare: async (bytes, input) => (await step()).preparePdf(bytes, input),
  preview: async (bytes, roles) => (await step()).previewPlacement(bytes, roles),
  placeTemplate: async (bytes, fields) => (await step()).placeTemplate(bytes, fields),
  stamp: async (bytes, stamps) => (await step()).stampPdf(bytes, stamps),
  appendAuditPage: async (bytes, audit) => (await step()).appendAuditPage(bytes, audit),
  auditCertificate: async (audit, events) => (await step()).renderAuditCertificate({ ...audit, events }),
};
