// Building the configured provider at start (runtime.ts). Guarantees: a configured but unusable provider stops
// start-up with one line (ConfigError) naming what is wrong: the CA file unreadable or without a certificate, or the
// provider's `info` unreachable or without the OAuth 2.0 authorization code flow.
import fs from 'node:fs/promises';
import { ConfigError, type Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import { pemToDer } from '../pki/cms.js';
import { createRevocationFetcher } from '../pki/revocation-fetch.js';
import type { Tsa } from '../pki/types.js';
import { createCscClient } from './csc-client.js';
import type { QesService } from './landing.js';

const certificatesIn = (pem: string): Uint8Array[] =>
  [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => pemToDer(m[0]));

export async function createQesService(
  config: Config,
  clock: Clock,
  tsa: () => Promise<Tsa>,
): Promise<(QesService & { close(): Promise<void> }) | null> {
  const qes = config.qes;
  if (!qes) return null;
  const pem = await fs.readFile(qes.caFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new ConfigError(`QES_CA_FILE: cannot read ${qes.caFile} (${err.code ?? err.message})`);
  });
  const anchorsDer = certificatesIn(pem);
  if (anchorsDer.length === 0) throw new ConfigError(`QES_CA_FILE: ${qes.caFile} holds no PEM certificate`);
  const client = createCscClient(qes);
  const info = await client.info().catch((err: Error) => {
    throw new ConfigError(`QES_PROVIDER_URL: ${qes.providerUrl}/info failed: ${err.message}`);
  });
  const revocation = createRevocationFetcher({ clock, allowPrivateNetwork: config.allowPrivateNetwork });
  return {
    client,
    clientId: qes.clientId,
    name: info.name,
    info: () => client.info(),
    anchorsDer,
    revocation,
    tsa,
    close: () => revocation.close(),
  };
}
