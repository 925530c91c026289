// A test QTSP's CA, made with the openssl CLI: per user a qualified signer certificate (QC statements
// QcCompliance, QcSSCD, QcType esign; keyUsage nonRepudiation) and, for failure tests, a non-qualified, an expired
// and a revoked variant. The CRL lists the revoked ones; certificates name `crlUrl` as their distribution point.
import { createPublicKey } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pemToDer } from '../../pki/cms.js';
import { caSection, KEY_ARGS, openssl } from '../../pki/testing/openssl-ca.js';

export type QesKey = 'rsa' | 'p256';
export type QesCert = { certFile: string; keyFile: string; certPem: string; certDer: Uint8Array; key: QesKey };
export type QesVariant = 'qualified' | 'not_qualified' | 'expired' | 'revoked';
export type QesCa = {
  caCert: QesCert;
  /** users[name][variant] */
  users: Record<string, Record<QesVariant, QesCert>>;
  /** The current CRL (DER), listing the revoked variants. */
  crl(): Promise<Uint8Array>;
  /** Raw signature value over a ready hash (SHA-256): PKCS#1 v1.5 for RSA, DER ECDSA-Sig-Value for P-256. */
  signHash(cert: QesCert, hash: Uint8Array): Promise<Uint8Array>;
};

export const QC_OIDS = {
  qcStatements: '1.3.6.1.5.5.7.1.3',
  compliance: '0.4.0.1862.1.1',
  sscd: '0.4.0.1862.1.4',
  type: '0.4.0.1862.1.6',
  esign: '0.4.0.1862.1.6.1',
} as const;

const config = (dir: string, crlUrl: string) => `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = Test QTSP Qualified CA
O = Test QTSP
C = DE
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v3_qualified]
basicConstraints = CA:FALSE
keyUsage = critical,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
crlDistributionPoints = URI:${crlUrl}
${QC_OIDS.qcStatements} = ASN1:SEQUENCE:qc_statements
[v3_plain]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
crlDistributionPoints = URI:${crlUrl}
[qc_statements]
s1 = SEQUENCE:qc_compliance
s2 = SEQUENCE:qc_sscd
s3 = SEQUENCE:qc_type
[qc_compliance]
id = OID:${QC_OIDS.compliance}
[qc_sscd]
id = OID:${QC_OIDS.sscd}
[qc_type]
id = OID:${QC_OIDS.type}
types = SEQUENCE:qc_type_list
[qc_type_list]
t1 = OID:${QC_OIDS.esign}
${caSection(dir, 365)}`;

const load = async (certFile: string, keyFile: string, key: QesKey): Promise<QesCert> => {
  const certPem = await readFile(certFile, 'utf8');
  return { certFile, keyFile, certPem, certDer: pemToDer(certPem), key };
};

/** Past dates for the expired variant, in openssl's YYYYMMDDHHMMSSZ. */
const EXPIRED = ['-startdate', '20200101000000Z', '-enddate', '20200201000000Z'];

export async function createQesCa(
  dir: string,
  opts: { users: string[]; key?: QesKey; crlUrl: string },
): Promise<QesCa> {
  await mkdir(join(dir, 'new'), { recursive: true });
  const f = (n: string) => join(dir, n);
  const cnf = f('openssl.cnf');
  await writeFile(cnf, config(dir, opts.crlUrl));
  await writeFile(f('index.txt'), '');
  await writeFile(f('serial'), '2000\n');
  await writeFile(f('crlnumber'), '01\n');
  await openssl(['genpkey', ...KEY_ARGS.p256, '-out', f('ca.key')]);
  await openssl(['req', '-config', cnf, '-x509', '-new', '-key', f('ca.key'), '-days', '3650']
    .concat(['-extensions', 'v3_ca', '-out', f('ca.pem')])); // prettier-ignore
  const key = opts.key ?? 'rsa';
  let n = 0;
  const issue = async (cn: string, ext: 'qualified' | 'plain', dates: string[]): Promise<QesCert> => {
    const id = `s${++n}`;
    await openssl(['genpkey', ...KEY_ARGS[key], '-out', f(`${id}.key`)]);
    await openssl(['req', '-new', '-key', f(`${id}.key`), '-subj', `/CN=${cn}/O=Test QTSP Customers/C=DE`]
      .concat(['-out', f(`${id}.csr`)])); // prettier-ignore
    await openssl(['ca', '-batch', '-notext', '-config', cnf, '-extensions', `v3_${ext}`, ...dates]
      .concat(['-in', f(`${id}.csr`), '-out', f(`${id}.pem`)])); // prettier-ignore
    return load(f(`${id}.pem`), f(`${id}.key`), key);
  };
  const users: QesCa['users'] = {};
  for (const user of opts.users) {
    const revoked = await issue(user, 'qualified', []);
    await openssl(['ca', '-config', cnf, '-revoke', revoked.certFile, '-crl_reason', 'keyCompromise']);
    users[user] = {
      qualified: await issue(user, 'qualified', []),
      not_qualified: await issue(user, 'plain', []),
      expired: await issue(user, 'qualified', EXPIRED),
      revoked,
    };
  }
  return {
    caCert: await load(f('ca.pem'), f('ca.key'), 'p256'),
    users,
    async crl() {
      await openssl(['ca', '-config', cnf, '-gencrl', '-out', f('crl.pem')]);
      await openssl(['crl', '-in', f('crl.pem'), '-outform', 'DER', '-out', f('crl.der')]);
      return new Uint8Array(await readFile(f('crl.der')));
    },
    async signHash(cert, hash) {
      // pkeyutl with digest:sha256 treats the input as the digest (RSA wraps it in a DigestInfo).
      const id = ++n;
      const [inFile, out] = [f(`hash-${id}.bin`), f(`sig-${id}.bin`)];
      await writeFile(inFile, hash);
      await openssl(['pkeyutl', '-sign', '-inkey', cert.keyFile, '-pkeyopt', 'digest:sha256']
        .concat(['-in', inFile, '-out', out])); // prettier-ignore
      return new Uint8Array(await readFile(out));
    },
  };
}

/** Key length in bits, for credentials/info. */
export const keyBits = (cert: QesCert): number =>
  createPublicKey(cert.certPem).asymmetricKeyDetails?.modulusLength ?? 256;
