// What this instance publishes and trusts: each CA generation's certificate and current CRL (public routes named by
// the CRL distribution point and AIA of the certificates it issues), and the anchors a verifier accepts. Loads the
// CAs on first use (with the CRL code: @peculiar/x509 stays out of a start), never a seal identity, and looks for a
// new generation again when asked for one it does not know.
import type { Clock } from '../lib/clock.js';
import type { CrlIssuer } from './crl.js';

export type TrustStore = {
  /** Generation `n`'s CA certificate (the first by default); null when there is no such generation. */
  caCertDer(n?: number): Promise<Uint8Array | null>;
  /** Generation `n`'s published CRL, reissued well before its nextUpdate; null when there is no such generation. */
  currentCrl(n?: number): Promise<Uint8Array | null>;
  /** What a verifier trusts: every local CA and any configured anchors (TSA_CA_FILE), with their current CRLs. */
  verificationTrust(): Promise<{ anchorsDer: Uint8Array[]; crlsDer: Uint8Array[] }>;
};

/** Trusts nothing: `signet verify` on a machine without a PKI still reports integrity and levels. */
export const NO_TRUST: TrustStore = {
  caCertDer: async () => null,
  currentCrl: async () => null,
  verificationTrust: async () => ({ anchorsDer: [], crlsDer: [] }),
};

type Generation = { n: number; caCertDer: Uint8Array; ca: CrlIssuer };

export function createTrustStore(opts: {
  loadCas: () => Promise<Generation[]>;
  /** The generations on disk now (a directory listing): a new one is loaded when it appears. */
  generationNumbers: () => Promise<number[]>;
  clock: Clock;
  extraAnchors?: () => Promise<Uint8Array[]>;
}): TrustStore {
  type Loaded = Map<number, { caCertDer: Uint8Array; crl: { current(): Promise<Uint8Array> } }>;
  let loaded: Promise<Loaded> | null = null;
  const load = (again = false) => {
    if (again || !loaded)
      loaded = Promise.all([opts.loadCas(), import('./crl.js')]).then(
        ([gens, { createCrlPublisher }]) =>
          new Map(gens.map((g) => [g.n, { caCertDer: g.caCertDer, crl: createCrlPublisher(g.ca, opts.clock) }])),
        (err) => {
          loaded = null;
          throw err;
        },
      );
    return loaded;
  };
  const generation = async (n: number) => (await load()).get(n) ?? (await load(true)).get(n) ?? null;
  return {
    caCertDer: async (n = 1) => (await generation(n))?.caCertDer ?? null,
    currentCrl: async (n = 1) => (await (await generation(n))?.crl.current()) ?? null,
    async verificationTrust() {
      let known = await load();
      if ((await opts.generationNumbers()).some((n) => !known.has(n))) known = await load(true);
      const gens = [...known.values()];
      return {
        anchorsDer: [...gens.map((g) => g.caCertDer), ...((await opts.extraAnchors?.()) ?? [])],
        crlsDer: await Promise.all(gens.map((g) => g.crl.current())),
      };
    },
  };
}
