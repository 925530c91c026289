// A template as tests (and the bench) use it: a PDF with anchor markers for the sender's values and two recipient
// slots, and the body that publishes it.
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { b64 } from '../../testing/e2e.js';

/** `pages` pages; page 1 carries the sender's markers, the last page the signature markers. */
export async function templatePdf(pages = 2, extraMarkers: string[] = []): Promise<Uint8Array> {
  const text: string[][] = Array.from({ length: pages }, (_, i) => [`Agreement page ${i + 1}`]);
  text[0] = [
    'Services agreement',
    'Client: {{client_name}}',
    'Plan: {{plan}}',
    'Seats: {{seats}}',
    'Start: {{start_date}}',
    ...extraMarkers,
  ];
  text[pages - 1] = [
    ...(pages > 1 ? [`Agreement page ${pages}`] : []),
    'Client signature: {{sig_client}}',
    'Provider signature: {{sig_provider}}',
    'Note: {{client_note}}',
  ];
  return makePdf({ text });
}

export const SLOTS = [
  { name: 'client', signing_order: 1 },
  { name: 'provider', signing_order: 2 },
];

export const FIELDS = [
  { key: 'client_name', type: 'text', slot: 'sender', required: true, anchor: '{{client_name}}', max_length: 80 },
  { key: 'plan', type: 'enum', slot: 'sender', required: true, options: ['basic', 'pro'], anchor: '{{plan}}' },
  { key: 'seats', type: 'number', slot: 'sender', min: 1, max: 500, anchor: '{{seats}}' },
  { key: 'start_date', type: 'date', slot: 'sender', anchor: '{{start_date}}' },
  { key: 'sig_client', type: 'signature', slot: 'client', anchor: '{{sig_client}}' },
  { key: 'client_note', type: 'text', slot: 'client', anchor: '{{client_note}}' },
  { key: 'sig_provider', type: 'signature', slot: 'provider', anchor: '{{sig_provider}}' },
];

export async function templateBody(name = 'Services agreement', pages = 2) {
  return {
    name,
    file: { name: 'agreement.pdf', content_base64: b64(await templatePdf(pages)) },
    slots: SLOTS,
    fields: FIELDS,
  };
}

export const VALUES = { client_name: 'Ada Lovelace Ltd', plan: 'pro', seats: 12, start_date: '2026-12-01' };
