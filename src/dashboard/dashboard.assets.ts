// The workspace dashboard: Pico CSS from its package (only the dashboard uses it), and its own style and script.
import { besideModule, packageFile, type AssetTable } from '../web/assets.js';

export const DASHBOARD_ASSETS = {
  'pico.min.css': { file: packageFile(import.meta.url, '@picocss/pico', 'css/pico.min.css') },
  'dashboard.css': { file: besideModule(import.meta.url, 'assets/dashboard.css') },
  'dashboard.js': { file: besideModule(import.meta.url, 'assets/dashboard.js') },
  // The send page: the field editor (reusable by templates: parties and field types are its parameters), the page's
  // glue and style; the PDF is drawn by the signer page's pdf-view.js and pdf.js, by name.
  'field-editor.js': { file: besideModule(import.meta.url, 'assets/field-editor.js') },
  'send.js': { file: besideModule(import.meta.url, 'assets/send.js') },
  'send.css': { file: besideModule(import.meta.url, 'assets/send.css') },
  // The template create and publish pages: the same editor over the rows of fields (rows and boxes are one truth).
  'template-fields.js': { file: besideModule(import.meta.url, 'assets/template-fields.js') },
} satisfies AssetTable;
