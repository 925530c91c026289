// A foreign CA made with the openssl CLI, for verification tests: certificates of several key types, detached CMS
// signatures (`openssl cms -sign`), revocation and CRLs (`openssl ca -revoke`, `-gencrl`). Nothing here uses
// Signet's own PKI code, so what the verifier accepts was produced independently.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pemToDer } from '../cms.js';
import { run } from './tools.js';

export type KeyType = 'rsa' | 'rsa1024' | 'p256' | 'p384' | 'p521';

export type Issued = { name: string; certFile: string; keyFile: string; certPem: string; certDer: Uint8Array };

export type OpensslCa = Issued & {
  /** Issues a certificate; dates as openssl's YYYYMMDDHHMMSSZ (default: now for 30 days). */
  issue(
    name: string,
    opts?: { key?: KeyType; extensions?: 'leaf' | 'tsa' | 'ca'; start?: string; end?: string },
  ): Promise<Issued>;
  /** A detached CMS signature (DER) over `data` by `signer`. */
  sign(
    signer: Issued,
    data: Uint8Array,
    opts?: { md?: string; pss?: boolean; noattr?: boolean; nocerts?: boolean },
  ): Promise<Uint8Array>;
  revoke(cert: Issued): Promise<void>;
  /** A CRL (DER) listing every revoked certificate, valid `days` from now. */
  crl(days?: number): Promise<Uint8Array>;
};

export const KEY_ARGS: Record<KeyType, string[]> = {
  rsa: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  rsa1024: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024'],
  p256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  p384: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  p521: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'],
};

/** The `openssl ca` sections every test CA here uses: its files under `dir`, any subject, no copied extensions. */
export const caSection = (dir: string, days: number) => `[ca]
default_ca = ca_default
[ca_default]
dir = ${dir}
database = $dir/index.txt
new_certs_dir = $dir/new
certificate = $dir/ca.pem
private_key = $dir/ca.key
serial = $dir/serial
crlnumber = $dir/crlnumber
default_md = sha256
default_days = ${days}
default_crl_days = 30
policy = policy_any
unique_subject = no
copy_extensions = none
[policy_any]
commonName = supplied
organizationName = optional
countryName = optional
`;

const config = (dir: string) => `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = Foreign Test CA
O = Elsewhere Ltd
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_leaf]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
extendedKeyUsage = emailProtection
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_tsa]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
${caSection(dir, 30)}`;

export async function openssl(args: string[], input?: Uint8Array): Promise<string> {
  const r = await run('openssl', args, input);
  if (r.code !== 0) throw new Error(`openssl ${args.slice(0, 2).join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

export async function createOpensslCa(dir: string, key: KeyType = 'rsa'): Promise<OpensslCa> {
  await mkdir(join(dir, 'new'), { recursive: true });
  const cnf = join(dir, 'openssl.cnf');
  await writeFile(cnf, config(dir));
  await writeFile(join(dir, 'index.txt'), '');
  await writeFile(join(dir, 'serial'), '1000\n');
  await writeFile(join(dir, 'crlnumber'), '01\n');
  const f = (n: string) => join(dir, n);
  await openssl(['genpkey', ...KEY_ARGS[key], '-out', f('ca.key')]);
  await openssl([
    'req',
    '-config',
    cnf,
    '-x509',
    '-new',
    '-key',
    f('ca.key'),
    '-days',
    '3650',
    '-extensions',
    'v3_ca',
    '-out',
    f('ca.pem'),
  ]);
  const load = async (name: string, certFile: string, keyFile: string): Promise<Issued> => {
    const certPem = await readFile(certFile, 'utf8');
    return { name, certFile, keyFile, certPem, certDer: pemToDer(certPem) };
  };
  const ca = await load('Foreign Test CA', f('ca.pem'), f('ca.key'));
  let n = 0;
  return {
    ...ca,
    async issue(name, opts = {}) {
      const id = `c${++n}`;
      await openssl(['genpkey', ...KEY_ARGS[opts.key ?? 'p256'], '-out', f(`${id}.key`)]);
      await openssl([
        'req',
        '-new',
        '-key',
        f(`${id}.key`),
        '-subj',
        `/CN=${name}/O=Elsewhere Ltd`,
        '-out',
        f(`${id}.csr`),
      ]);
      const dates = opts.start ? ['-startdate', opts.start, '-enddate', opts.end!] : ['-days', '30'];
      await openssl([
        'ca',
        '-batch',
        '-notext',
        '-config',
        cnf,
        '-extensions',
        `v3_${opts.extensions ?? 'leaf'}`,
        ...dates,
        '-in',
        f(`${id}.csr`),
        '-out',
        f(`${id}.pem`),
      ]);
      return load(name, f(`${id}.pem`), f(`${id}.key`));
    },
    async sign(signer, data, opts = {}) {
      await writeFile(f('data.bin'), data);
      await openssl([
        'cms',
        '-sign',
        '-binary',
        '-in',
        f('data.bin'),
        '-signer',
        signer.certFile,
        '-inkey',
        signer.keyFile,
        '-certfile',
        ca.certFile,
        '-md',
        opts.md ?? 'sha256',
        '-outform',
        'DER',
        '-out',
        f('sig.der'),
        ...(opts.pss ? ['-keyopt', 'rsa_padding_mode:pss'] : []),
        ...(opts.noattr ? ['-noattr'] : []),
        ...(opts.nocerts ? ['-nocerts'] : []),
      ]);
      return new Uint8Array(await readFile(f('sig.der')));
    },
    async revoke(cert) {
      await openssl(['ca', '-config', cnf, '-revoke', cert.certFile, '-crl_reason', 'keyCompromise']);
    },
    async crl(days = 30) {
      await openssl(['ca', '-config', cnf, '-gencrl', '-crldays', String(days), '-out', f('crl.pem')]);
      await openssl(['crl', '-in', f('crl.pem'), '-outform', 'DER', '-out', f('crl.der')]);
      return new Uint8Array(await readFile(f('crl.der')));
    },
  };
}
