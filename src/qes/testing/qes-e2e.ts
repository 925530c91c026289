// The end-to-end fixture of qualified signatures: the local provider (users anna and li), the real app on a port
// known before start (BASE_URL names it, so the provider's redirect comes back to it) for an Enterprise workspace,
// and the provider's CA as QES_CA_FILE. Callers close it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { freePort, type HarnessOptions } from '../../testing/harness.js';
import { b64, startE2E, type E2E } from '../../testing/e2e.js';
import { startCscProvider, type CscProvider } from './csc-provider.js';
import type { QesKey } from './qes-ca.js';

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
