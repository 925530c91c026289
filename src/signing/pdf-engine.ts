// The PDF engine the state machine uses, backed by src/documents/pdf (every step runs in worker threads there).
import { renderAuditCertificate, appendAuditPage } from '../documents/pdf/audit-page.js';
import { previewPlacement } from '../documents/pdf/anchors.js';
import { inspectPdf } from '../documents/pdf/ingest.js';
import { preparePdf, type PlacementInput } from '../documents/pdf/placement.js';
import { stampPdf } from '../documents/pdf/stamp.js';
import type { PdfEngine } from './ports.js';

export const pdfEngine: PdfEngine = {
  inspect: (bytes) => inspectPdf(bytes),
  prepare: (bytes, input) => preparePdf(bytes, input as PlacementInput),
  preview: (bytes, roles) => previewPlacement(bytes, roles),
  stamp: (bytes, stamps) => stampPdf(bytes, stamps),
  appendAuditPage: (bytes, audit) => appendAuditPage(bytes, audit),
  auditCertificate: (audit, entries) =>
    renderAuditCertificate({
      ...audit,
      events: entries.map((e) => ({
        at: String(e.at),
        event: String(e.action),
        actor: (e.actor as string | null) ?? null,
        ip: (e.ip as string | null) ?? null,
        detail: e.detail ? JSON.stringify(e.detail) : null,
      })),
    }),
};
