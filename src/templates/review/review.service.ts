// What the review page (review.routes.ts, review-page.ts) reads, by the review link's token: 404 for any other.
import { findDocumentById } from '../../signing/signing.repo.js';
import { brandOf } from '../../workspaces/brand.js';
import { findWorkspace } from '../../workspaces/workspaces.repo.js';
import { instanceFor } from '../instances.js';
import { instanceRecipients, versionFields } from '../presenters.js';
import { stateError } from '../staging.js';
import { findTemplateById } from '../templates.repo.js';
import { SENDER_SLOT } from '../templates.schemas.js';
import { versionOf, type TemplatesDeps } from '../templates.service.js';

/** What the review page shows: the state, the rendered document's facts, the sender's values and the recipients. */
export async function reviewView(deps: TemplatesDeps, token: string) {
  const inst = await instanceFor(deps, { reviewToken: token });
  const doc = (await findDocumentById(deps.db.kysely, inst.document_id))!;
  const tpl = (await findTemplateById(deps.db.kysely, inst.template_id))!;
  const version = await versionOf(deps, tpl, inst.template_version);
  const resolved = JSON.parse(inst.field_values) as Record<string, string>;
  const values = versionFields(version)
    .filter((f) => f.slot === SENDER_SLOT)
    .map((f) => ({ key: f.key, label: f.label ?? f.key, type: f.type, value: resolved[f.key] ?? '' }));
  const err = stateError(inst, deps.clock.now());
  const state = !err ? 'staged' : err.name_ === 'review_expired' ? 'expired' : inst.status;
  const ws = await findWorkspace(deps.db.kysely, inst.workspace_id);
  return {
    state,
    instance: inst,
    document: doc,
    templateName: tpl.name,
    workspaceName: ws?.name ?? '',
    brand: ws ? brandOf(ws) : null,
    values,
    recipients: instanceRecipients(inst),
  };
}

/** The rendered PDF under review (the document's file with the sender's values stamped). */
export async function reviewPdf(deps: TemplatesDeps, token: string): Promise<Uint8Array> {
  const inst = await instanceFor(deps, { reviewToken: token });
  const doc = (await findDocumentById(deps.db.kysely, inst.document_id))!;
  return deps.blobs.get(doc.prepared_blob);
}
