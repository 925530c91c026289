// The workspace dashboard: Pico CSS from its package (only the dashboard uses it), and its own style and script.
import { besideModule, packageFile, type AssetTable } from '../web/assets.js';

export const DASHBOARD_ASSETS = {
  'pico.min.css': { file: packageFile(import.meta.url, '@picocss/pico', 'css/pico.min.css') },
  'dashboard.css': { file: besideModule(import.meta.url, 'assets/dashboard.css') },
  'dashboard.js': { file: besideModule(import.meta.url, 'assets/dashboard.js') },
} satisfies AssetTable;
