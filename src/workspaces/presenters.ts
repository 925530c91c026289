// The wire format of a workspace (GET /v1/me, the CLI), written once: the interface's four fields, and `region`
// (a Signet addition) only when the workspace has one, so nothing new appears otherwise.
import type { Workspace } from './workspaces.repo.js';

export const presentWorkspace = (
  w: Pick<Workspace, 'id' | 'name' | 'slug' | 'tier'> & { region?: string | null },
): { id: string; name: string; slug: string; tier: string; region?: string } => ({
  id: w.id,
  name: w.name,
  slug: w.slug,
  tier: w.tier,
  ...(w.region ? { region: w.region } : {}),
});
