// The end-to-end fixture of qualified signatures: the local provider (users anna and li), the real app on a port
// known before start (BASE_URL names it, so the provider's redirect comes back to it) for an Enterprise workspace,
// and the provider's CA as QES_CA_FILE. Callers close it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { pdfScratch } from '../../documents/pdf/testing/tools.js';
import { freePort, type HarnessOptions } from '../../testing/harness.js';
import { b64, startE2E, type E2E } from '../../testing/e2e.js';
import { startCscProvider, type CscProvider } from './csc-provider.js';
import type { QesKey } from './qes-ca.js';
import { judgeSignatures, pdfsigAllValid } from './judge.js';

export type QesE2E = {
  e: E2E;
  provider: CscProvider;
  origin: string;
  caFile: string;
  /**
   * Moves Signet's clock up to real time: the provider's CRLs are issued by openssl at the real time, which a
   * manual clock started earlier would see as "not yet valid".
   */
  syncClock(): void;
  close(): Promise<void>;
};

export async function startQesE2E(
  database: HarnessOptions['database'],
  o: { users?: string[]; key?: QesKey } = {},
): Promise<QesE2E> {
  const provider = await startCscProvider({ users: o.users ?? ['anna', 'li'], key: o.key });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-qes-'));
  const caFile = path.join(dir, 'qtsp-ca.pem');
  fs.writeFileSync(caFile, provider.caPem);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  provider.redirectUris.push(`${origin}/qes/callback`);
  let e: E2E;
  try {
    e = await startE2E({
      database,
      tier: 'enterprise',
      port,
      env: {
        BASE_URL: origin,
        QES_PROVIDER_URL: provider.cscUrl,
        QES_CLIENT_ID: provider.clientId,
        QES_CLIENT_SECRET: provider.clientSecret,
        QES_CA_FILE: caFile,
      },
    });
  } catch (err) {
    await provider.close();
    throw err;
  }
  return {
    e,
    provider,
    origin,
    caFile,
    syncClock: () => e.h.clock.set(Math.max(e.h.clock.now(), Date.now() + 1000)),
    async close() {
      await e.close();
      await provider.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A two-signer qualified request (anna, then li by order of the list), parallel unless said otherwise. */
export async function createQesRequest(e: E2E, o: { order?: 'parallel' | 'sequential'; locale?: string } = {}) {
  const created = await e.api('POST', '/v1/signing-requests', {
    title: 'Qualified agreement',
    signature_level: 'qes',
    placement: 'auto_append',
    signing_order: o.order ?? 'parallel',
    ...(o.locale ? { locale: o.locale } : {}),
    file: { name: 'agreement.pdf', content_base64: b64(await makePdf({ pages: 1, text: [['Qualified agreement']] })) },
    signers: [
      { role: 'first', name: 'Anna Müller', email: 'anna@example.com' },
      { role: 'second', name: '李华 Li', email: 'li@example.com' },
    ],
  });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  await e.work();
  return created.json.document_id as string;
}

/**
 * Judges a completed document of two qualified signers (anna, then li) with tools nobody here wrote: qpdf accepts the
 * file and every revision, openssl verifies both signer CMS against the QTSP CA with their own certificates, the
 * hashes the provider signed are the embedded signed attributes, pdfsig finds four valid signatures, and Signet's own
 * report calls the two qualified. Returns the PDF's text (pdftotext) and the verification report for more checks.
 */
export async function assertQualifiedSeal(e: E2E, provider: CscProvider, id: string) {
  const signed = await e.h.app.inject({
    method: 'GET',
    url: `/v1/documents/${id}/signed`,
    headers: { authorization: `Bearer ${e.token}` },
  });
  assert.equal(signed.statusCode, 200, signed.body);
  const pdf = new Uint8Array(signed.rawPayload);
  const tmp = await pdfScratch('signet-qes-');
  let text: string;
  try {
    const sigs = judgeSignatures(tmp, pdf, provider.caPem);
    assert.deepEqual(
      sigs.map((s) => s.kind),
      ['signature', 'signature', 'signature', 'document_timestamp'],
      'anna, li, the seal, then the document timestamp',
    );
    const [a, l, seal] = sigs;
    assert.ok(a!.qtspVerified && l!.qtspVerified, 'openssl verifies both signer signatures against the QTSP CA');
    assert.equal(a!.signerPem?.trim(), provider.currentCert('anna').certPem.trim(), 'anna signed with her cert');
    assert.equal(l!.signerPem?.trim(), provider.currentCert('li').certPem.trim(), 'li signed with hers');
    assert.equal(seal!.qtspVerified, false, 'the seal is not the QTSP’s');
    assert.deepEqual(
      provider.signed.map((s) => Buffer.from(s.hash, 'base64').toString('hex')).slice(-2),
      [a!.signedAttrsSha256, l!.signedAttrsSha256],
      'the hashes the provider signed are the embedded signed attributes',
    );
    assert.equal(pdfsigAllValid(tmp, pdf).count, 4, 'pdfsig lists four signatures, each valid');
    text = tmp.pdfText(pdf);
  } finally {
    await tmp.cleanup();
  }
  const report = await e.h.request('POST', '/v1/verifications', {
    token: e.token,
    rawBody: Buffer.from(pdf),
    headers: { 'content-type': 'application/pdf' },
  });
  assert.equal(report.status, 200, report.text);
  const v = report.json.verification;
  assert.equal(v.verdict, 'valid', JSON.stringify(v.problems));
  assert.deepEqual(
    v.signatures.map((s: any) => s.level),
    ['qes', 'qes', 'advanced', null],
  );
  return { pdf, text, verification: v };
}
