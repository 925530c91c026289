// A workspace's brand set directly for tests (issue 27): the row's columns through the repository's setters and the
// logo's bytes through the runtime's blob store, as the settings would leave them; and a logo made in code.
import { makePng } from '../documents/pdf/testing/fixtures.js';
import { setWorkspaceBrandColor, setWorkspaceLogo } from '../workspaces/workspaces.repo.js';
import type { Harness } from './harness.js';

/** A 240×64 PNG wordmark: a filled disc and three bars in `rgb` on transparent ground. */
export function logoPng(rgb: [number, number, number] = [200, 40, 60]): Uint8Array {
  const ink: [number, number, number, number] = [...rgb, 255];
  return makePng(240, 64, (x, y) => {
    const disc = (x - 32) ** 2 + (y - 32) ** 2 <= 26 ** 2;
    const bar = x >= 72 && x < 232 && [10, 28, 46].some((top) => y >= top && y < top + 10 && x < 232 - top * 1.5);
    return disc || bar ? ink : [0, 0, 0, 0];
  });
}

export async function setBrand(
  h: Pick<Harness, 'db' | 'runtime'>,
  workspaceId: string,
  o: { color?: string | null; logo?: Uint8Array | null; logoType?: 'image/png' | 'image/jpeg'; region?: string | null },
): Promise<void> {
  if (o.color !== undefined) await setWorkspaceBrandColor(h.db.kysely, workspaceId, o.color);
  if (o.logo !== undefined)
    await setWorkspaceLogo(
      h.db.kysely,
      workspaceId,
      o.logo ? { blob: await h.runtime.blobs.put(o.logo, 'logo'), type: o.logoType ?? 'image/png' } : null,
    );
  // The region is written at creation (SIGNET_REGION); no setter exists, so the test writes the column itself.
  if (o.region !== undefined)
    await h.db.kysely.updateTable('workspaces').set({ region: o.region }).where('id', '=', workspaceId).execute();
}
