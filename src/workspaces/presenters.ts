// The wire format of a workspace (GET /v1/me, the CLI), written once.
import type { Workspace } from './workspaces.repo.js';

export const presentWorkspace = (w: Pick<Workspace, 'id' | 'name' | 'slug' | 'tier'>) => ({
  id: w.id,
  name: w.name,
  slug: w.slug,
  tier: w.tier,
});
