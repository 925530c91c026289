// What the signing e2e files share: signers with fresh addresses and a plain PDF to send them.
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { b64 } from '../../testing/e2e.js';

export const signers = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: `signer${i + 1}`,
    email: `s${i + 1}.${Math.random().toString(36).slice(2, 8)}@example.com`,
    name: `Signer ${i + 1}`,
  }));

export async function plainPdf(pages = 2) {
  return b64(await makePdf({ pages, text: [['Master services agreement'], ['Page two']] }));
}
