// The /verify page's style sheet.
import { besideModule, type AssetTable } from '../web/assets.js';

export const VERIFY_ASSETS = {
  'verify.css': { file: besideModule(import.meta.url, 'assets/verify.css') },
} satisfies AssetTable;
