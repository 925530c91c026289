// PEM reading that needs no ASN.1 library, for start-up paths that must not load the PKI modules (runtime.ts).

/** Every certificate of a PEM bundle, in order (a CA file may hold several). */
export const pemCertsToDer = (pem: string): Uint8Array[] =>
  [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map(
    (m) => new Uint8Array(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64')),
  );
