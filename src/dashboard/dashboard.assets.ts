// The workspace dashboard: Pico CSS from its package (only the dashboard uses it), and its own style and script.
import { besideModule, packageFile, type AssetTable, type Assets } from '../web/assets.js';

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

/** The field editor's pdf.js, by versioned URL: the same for the send page and the template pages. */
export const editorPdfjs = (a: Assets) => ({
  lib: a.url('pdf.min.mjs'),
  worker: a.url('pdf.worker.min.mjs'),
  view: a.url('pdf-view.js'),
  fonts: a.url('pdfjs/standard_fonts/'),
  cmaps: a.url('pdfjs/cmaps/'),
});
