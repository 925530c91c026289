// Loads a seal identity from a PKCS#12 file in-process (pkijs). Supports what OpenSSL 3 writes by default
// (PBES2/PBKDF2 with AES, HMAC-SHA-256 MAC) and unencrypted bags. Legacy PKCS#12 PBE ciphers (RC2, 3DES:
// `openssl pkcs12 -legacy`, old Windows exports) are not supported by pkijs: re-export such files with OpenSSL 3.
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ab, importSigningKey, keyMatchesCert, parseCert, serialHexOf } from './cms.js';
import type { SealIdentity } from './types.js';

const BAG_KEY = '1.2.840.113549.1.12.10.1.1';
const BAG_SHROUDED_KEY = '1.2.840.113549.1.12.10.1.2';
const BAG_CERT = '1.2.840.113549.1.12.10.1.3';
const CERT_X509 = '1.2.840.113549.1.9.22.1';

export async function loadP12(file: Uint8Array, password: string): Promise<SealIdentity> {
  const pw = ab(new TextEncoder().encode(password));
  let keys: Uint8Array[] = [];
  const certs: Uint8Array[] = [];
  try {
    const pfx = pkijs.PFX.fromBER(ab(file));
    await pfx.parseInternalValues({ password: pw, checkIntegrity: true });
    const safe = pfx.parsedValue!.authenticatedSafe!;
    await safe.parseInternalValues({ safeContents: safe.safeContents.map(() => ({ password: pw })) });
    for (const { value } of safe.parsedValue!.safeContents) {
      for (const bag of value.safeBags) {
        if (bag.bagId === BAG_SHROUDED_KEY) {
          const shrouded = bag.bagValue as pkijs.PKCS8ShroudedKeyBag;
          // Public at runtime, typed protected in pkijs 3.
          await (
            shrouded as unknown as { parseInternalValues(p: { password: ArrayBuffer }): Promise<void> }
          ).parseInternalValues({ password: pw });
          keys.push(new Uint8Array(shrouded.parsedValue!.toSchema().toBER()));
        } else if (bag.bagId === BAG_KEY) {
          keys.push(new Uint8Array((bag.bagValue as pkijs.PrivateKeyInfo).toSchema().toBER()));
        } else if (bag.bagId === BAG_CERT) {
          const cb = bag.bagValue as pkijs.CertBag;
          if (cb.certId === CERT_X509)
            certs.push(new Uint8Array((cb.certValue as asn1js.OctetString).valueBlock.valueHexView));
        }
      }
    }
  } catch (err) {
    throw new Error(
      `cannot read the seal PKCS#12 file (wrong password, or a legacy cipher: re-export with OpenSSL 3): ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  keys = keys.filter((k) => k.byteLength > 0);
  if (keys.length !== 1)
    throw new Error(`the seal PKCS#12 file must hold exactly one private key, found ${keys.length}`);
  const leafDer = certs.find((c) => keyMatchesCert(keys[0], c));
  if (!leafDer) throw new Error('the seal PKCS#12 file holds no certificate for its private key');

  // Order the rest as a chain walking up from the leaf; certificates off the path are dropped.
  const parsed = certs.map((der) => ({ der, cert: parseCert(der) }));
  const chainDer: Uint8Array[] = [];
  let current = parseCert(leafDer);
  for (;;) {
    if (current.issuer.isEqual(current.subject)) break;
    const issuer = parsed.find(
      (p) => p.cert.subject.isEqual(current.issuer) && !chainDer.includes(p.der) && p.der !== leafDer,
    );
    if (!issuer) break;
    chainDer.push(issuer.der);
    current = issuer.cert;
  }
  return {
    certDer: leafDer,
    chainDer,
    privateKey: await importSigningKey(keys[0]),
    serialHex: serialHexOf(parseCert(leafDer)),
  };
}
