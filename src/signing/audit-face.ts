// What the audit page (sealing) and the audit certificate show of the sending workspace (issue 27): its logo, read
// from the blob store, and its hosting region. A logo that cannot be read is left out: the audit page never fails
// for a decoration.
import type { AuditFace } from '../documents/pdf/audit-page.js';
import { brandOf } from '../workspaces/brand.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import type { SigningDeps } from './signing.service.js';

export async function auditFace(deps: Pick<SigningDeps, 'db' | 'blobs'>, workspaceId: string): Promise<AuditFace> {
  const ws = await findWorkspace(deps.db.kysely, workspaceId);
  const brand = ws ? brandOf(ws) : null;
  if (!brand) return {};
  const bytes = brand.logo ? await deps.blobs.get(brand.logo.blob).catch(() => null) : null;
  return {
    logo: bytes && brand.logo ? { bytes, type: brand.logo.type } : null,
    region: brand.region,
  };
}
