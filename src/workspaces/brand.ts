// A workspace's face as pages, mails and the audit certificate read it: its name, accent colour, logo and region.
// The logo's address carries a token derived from its blob key, and the key is new on every upload, so the address
// changes whenever the logo does and the route (brand.routes.ts) may let it be cached for ever.
import { sha256Hex } from '../lib/crypto.js';
import type { LogoType } from './brand-rules.js';

export type Brand = {
  name: string;
  color: string | null;
  logo: { path: string; type: 'image/png' | 'image/jpeg'; blob: string } | null;
  region: string | null;
};

export type BrandRow = {
  id: string;
  name: string;
  brand_color?: string | null;
  logo_blob?: string | null;
  logo_type?: string | null;
  region?: string | null;
};

export const LOGO_TYPES: readonly LogoType[] = ['image/png', 'image/jpeg'];
const isLogoType = (t: string | null): t is LogoType => (LOGO_TYPES as readonly (string | null)[]).includes(t);

/** The token in a logo's address: the first 16 hex of the SHA-256 of its blob key (the key itself stays private). */
export const logoToken = (blobKey: string): string => sha256Hex(blobKey).slice(0, 16);

/** The route path of a workspace's logo stored under `blobKey`, relative to BASE_URL. */
export const logoPath = (workspaceId: string, blobKey: string): string =>
  `/brand/${encodeURIComponent(workspaceId)}/logo/${logoToken(blobKey)}`;

/** The brand of a workspace row; a logo whose type is not PNG or JPEG is treated as none. */
export function brandOf(row: BrandRow): Brand {
  const blob = row.logo_blob ?? null;
  const type = row.logo_type ?? null;
  return {
    name: row.name,
    color: row.brand_color ?? null,
    logo: blob && isLogoType(type) ? { path: logoPath(row.id, blob), type, blob } : null,
    region: row.region ?? null,
  };
}
