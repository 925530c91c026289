// What this instance publishes and trusts: its CA certificate and current CRL (public routes named by the CRL
// distribution point and AIA of the certificates it issues), and the anchors a verifier accepts. Loads the CA on
// first use only (with the CRL code: @peculiar/x509 stays out of a start), never the seal identity.
import type { Clock } from '../lib/clock.js';
import type { CrlIssuer } from './crl.js';

export type TrustStore = {
  caCertDer(): Promise<Uint8Array>;
  /** The published CRL; reissued well before its nextUpdate. */
  currentCrl(): Promise<Uint8Array>;
  /** What a verifier trusts: the local CA and any configured anchors (TSA_CA_FILE), with the current CRL. */
  verificationTrust(): Promise<{ anchorsDer: Uint8Array[]; crlsDer: Uint8Array[] }>;
};

/** Trusts nothing: `signet verify` on a machine without a PKI still reports integrity and levels. */
export const NO_TRUST: TrustStore = {
  caCertDer: () => Promise.reject(new Error('no local CA')),
  currentCrl: () => Promise.reject(new Error('no local CA')),
  verificationTrust: async () => ({ anchorsDer: [], crlsDer: [] }),
};

export function createTrustStore(opts: {
  loadCa: () => Promise<{ caCertDer: Uint8Array; ca: CrlIssuer }>;
  clock: Clock;
  extraAnchors?: () => Promise<Uint8Array[]>;
}): TrustStore {
  let loaded: Promise<{ caCertDer: Uint8Array; crl: { current(): Promise<Uint8Array> } }> | null = null;
  const load = () =>
    (loaded ??= Promise.all([opts.loadCa(), import('./crl.js')]).then(
      ([{ caCertDer, ca }, { createCrlPublisher }]) => ({
        caCertDer,
        crl: createCrlPublisher(ca, opts.clock),
      }),
    ));
  return {
    caCertDer: async () => (await load()).caCertDer,
    currentCrl: async () => (await load()).crl.current(),
    async verificationTrust() {
      const { caCertDer, crl } = await load();
      return { anchorsDer: [caCertDer, ...((await opts.extraAnchors?.()) ?? [])], crlsDer: [await crl.current()] };
    },
  };
}
