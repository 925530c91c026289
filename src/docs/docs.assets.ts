// The API reference: Redoc's standalone bundle (only this page uses it), and the page's own start-up script and style.
import { besideModule, packageFile, type AssetTable } from '../web/assets.js';

/**
 * Redoc's bundle draws one image from Redocly's CDN (the sidebar's "API docs by Redocly" logo); the API reference
 * must work offline and reach no other host, so it is served with an empty image instead (its error hides it).
 */
const REDOC_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';
function withoutRemoteLogo(text: string): string {
  if (text.split(REDOC_LOGO).length !== 2) throw new Error(`redoc bundle: expected ${REDOC_LOGO} exactly once`);
  return text.replace(REDOC_LOGO, '"data:,"');
}

export const DOCS_ASSETS = {
  'redoc.standalone.js': {
    file: packageFile(import.meta.url, 'redoc', 'bundles/redoc.standalone.js'),
    patch: withoutRemoteLogo,
  },
  'docs.js': { file: besideModule(import.meta.url, 'assets/docs.js') },
  'docs.css': { file: besideModule(import.meta.url, 'assets/docs.css') },
} satisfies AssetTable;
