// Worker-thread entry for all PDF work (see pool.ts). ApiErrors are returned as data, because the pool only
// carries an Error's message across the thread boundary. The only importer of the steps' worker sides (*.work.ts,
// which load pdf-lib, fontkit and pdf.js); the main thread reaches it through pool.ts's worker URL, never an import.
import { ApiError } from '../../lib/errors.js';
import type { AuditCertificateInput, AuditInfo } from './audit-page.js';
import { appendAuditPageInWorker, renderAuditCertificateInWorker } from './audit-page.work.js';
import { scanAnchorsInWorker } from './anchors.work.js';
import { inspectInWorker } from './ingest.work.js';
import { openWithPdfjs } from './pdfjs.js';
import type { PlacementInput } from './placement.js';
import { prepareInWorker } from './placement.work.js';
import type { SerialisedError } from './pool.js';
import type { Stamp } from './stamp.js';
import { stampInWorker } from './stamp.work.js';
import type { TemplatePlacementField } from './template-placement.js';
import { findTemplateMarkersInWorker, placeTemplateInWorker } from './template-placement.work.js';
import type { VerifyTrust } from './verify.js';
import { verifyInWorker } from './verify.work.js';

export type WorkerInput =
  | { op: 'warmup' }
  | { op: 'inspect'; bytes: Uint8Array; maxPages: number }
  | { op: 'anchors'; bytes: Uint8Array }
  | { op: 'prepare'; bytes: Uint8Array; input: PlacementInput }
  | { op: 'place_template'; bytes: Uint8Array; fields: TemplatePlacementField[] }
  | { op: 'template_markers'; bytes: Uint8Array }
  | { op: 'stamp'; bytes: Uint8Array; stamps: Stamp[]; incremental?: boolean }
  | { op: 'audit_page'; bytes: Uint8Array; audit: AuditInfo; incremental?: boolean }
  | { op: 'audit_certificate'; input: AuditCertificateInput }
  | { op: 'verify'; bytes: Uint8Array; trust: VerifyTrust };

export type WorkerOutput = { ok: true; value: unknown } | { ok: false; error: SerialisedError };

export async function handle(input: WorkerInput): Promise<WorkerOutput> {
  try {
    return { ok: true, value: await run(input) };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: { name: err.name_, message: err.message, meta: err.meta } };
    throw err;
  }
}

function run(input: WorkerInput): Promise<unknown> {
  switch (input.op) {
    case 'warmup':
      return warmUp();
    case 'inspect':
      return inspectInWorker(input.bytes, input.maxPages);
    case 'anchors':
      return scanAnchorsInWorker(input.bytes);
    case 'prepare':
      return prepareInWorker(input.bytes, input.input);
    case 'place_template':
      return placeTemplateInWorker(input.bytes, input.fields);
    case 'template_markers':
      return findTemplateMarkersInWorker(input.bytes);
    case 'stamp':
      return stampInWorker(input.bytes, input.stamps, { incremental: input.incremental });
    case 'audit_page':
      return appendAuditPageInWorker(input.bytes, input.audit, { incremental: input.incremental });
    case 'audit_certificate':
      return renderAuditCertificateInWorker(input.input);
    case 'verify':
      return verifyInWorker(input.bytes, input.trust);
    default:
      throw new Error(`unknown PDF task ${(input as { op: string }).op}`);
  }
}

// Loads pdf.js and its in-thread worker, the slow part of a worker's start.
const TINY_PDF =
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';

async function warmUp(): Promise<null> {
  const doc = await openWithPdfjs(new TextEncoder().encode(TINY_PDF));
  await doc.destroy();
  return null;
}
