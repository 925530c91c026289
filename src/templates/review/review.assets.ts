// The review page's own script and style; it also loads the signer page's viewer (signer.css, pdf-view.js, pdf.js)
// by name through the app's assets.
import { besideModule, type AssetTable } from '../../web/assets.js';

export const REVIEW_ASSETS = {
  'review.js': { file: besideModule(import.meta.url, 'review.js') },
  'review.css': { file: besideModule(import.meta.url, 'review.css') },
} satisfies AssetTable;
