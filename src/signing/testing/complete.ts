// A document taken from creation to its sealed PDF through the real API and signer routes: what tests of what
// happens after completion (verification, renewal, copies) start from.
import assert from 'node:assert/strict';
import { derToPem } from '../../pki/cms.js';
import type { E2E } from '../../testing/e2e.js';
import { plainPdf, signers } from './requests.js';

export type Completed = { documentId: string; pdf: Uint8Array; emails: string[] };

export async function completeDocument(
  e: E2E,
  o: { signers?: number; title?: string; names?: string[] } = {},
): Promise<Completed> {
  const people = signers(o.signers ?? 1).map((p, i) => ({ ...p, name: o.names?.[i] ?? p.name }));
  const created = await e.api('POST', '/v1/signing-requests', {
    signers: people,
    file: { name: 'contract.pdf', content_base64: await plainPdf() },
    placement: 'auto_append',
    title: o.title ?? 'Contract to verify',
    locale: 'en',
  });
  assert.equal(created.status, 201, created.text);
  await e.work();
  for (const p of people) {
    const token = await e.linkFor(p.email);
    const headers = { 'user-agent': 'e2e-browser/1.0' };
    assert.equal((await e.h.request('POST', `/sign/${token}/view`, { headers })).status, 200);
    const signed = await e.h.request('POST', `/sign/${token}/sign`, {
      body: { signature: { type: 'typed', text: p.name } },
      headers,
    });
    assert.equal(signed.status, 200, signed.text);
  }
  await e.work();
  const documentId = created.json.document_id as string;
  const raw = await e.h.app.inject({
    method: 'GET',
    url: `/v1/documents/${documentId}/signed`,
    headers: { authorization: `Bearer ${e.token}` },
  });
  assert.equal(raw.statusCode, 200, raw.body);
  return { documentId, pdf: new Uint8Array(raw.rawPayload), emails: people.map((p) => p.email) };
}

/** The local CA's certificate as PEM, from the service's public route (what a reader would download). */
export async function localCaPem(e: E2E): Promise<string> {
  const r = await e.h.app.inject({ method: 'GET', url: '/pki/ca.crt' });
  assert.equal(r.statusCode, 200);
  return derToPem(new Uint8Array(r.rawPayload), 'CERTIFICATE');
}
