// What the signing e2e files share: signers with fresh addresses, a plain PDF to send them, and a sent document.
import assert from 'node:assert/strict';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { b64, type E2E } from '../../testing/e2e.js';

export const signers = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: `signer${i + 1}`,
    email: `s${i + 1}.${Math.random().toString(36).slice(2, 8)}@example.com`,
    name: `Signer ${i + 1}`,
  }));

export async function plainPdf(pages = 2) {
  return b64(await makePdf({ pages, text: [['Master services agreement'], ['Page two']] }));
}

/** A one-page document sent to `people` through the API, its mail and events worked off; its id. */
export async function sentDocument(e: E2E, title: string, people = signers(1)): Promise<string> {
  const r = await e.api('POST', '/v1/signing-requests', {
    signers: people,
    file: { name: 'contract.pdf', content_base64: await plainPdf(1) },
    placement: 'auto_append',
    title,
    locale: 'en',
  });
  assert.equal(r.status, 201, r.text);
  await e.work();
  return r.json.document_id as string;
}
