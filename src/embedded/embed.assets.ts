// Embedded signing: the bridge the framed page loads, and the helper host pages load (with its declarations).
import { besideModule, type AssetTable } from '../web/assets.js';

export const EMBED_ASSETS = {
  'embed-bridge.js': { file: besideModule(import.meta.url, 'assets/bridge.js') },
  'signet.js': { file: besideModule(import.meta.url, 'assets/signet.js') },
  'signet.d.ts': { file: besideModule(import.meta.url, 'assets/signet.d.ts') },
} satisfies AssetTable;
