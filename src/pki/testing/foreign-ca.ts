// A foreign CA for revocation tests, made with the openssl CLI (root, intermediate, leaves whose CRL distribution
// points name a local server), and CRLs for it from `openssl ca -gencrl` at times the test chooses.
import { webcrypto } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { ab, importSigningKey, pemToDer } from '../cms.js';
import { run } from './tools.js';

export type Issued = { der: Uint8Array; cert: x509.X509Certificate; key: CryptoKey };

const ok = async (args: string[]) => {
  const r = await run('openssl', args);
  if (r.code !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
};

const load = async (dir: string, name: string): Promise<Issued> => {
  const der = pemToDer(await readFile(join(dir, `${name}.crt`), 'utf8'));
  const key = await importSigningKey(pemToDer(await readFile(join(dir, `${name}.key`), 'utf8')));
  return { der, cert: new x509.X509Certificate(ab(der)), key };
};

export async function makeRoot(dir: string, cn: string): Promise<Issued> {
  await ok([
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', join(dir, 'root.key'), '-out', join(dir, 'root.crt'), '-subj', `/CN=${cn}`, '-days', '30',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
  return load(dir, 'root');
}

/**
 * A certificate for `name` issued by `issuerName` (files in `dir`); `ext` is openssl extension-file text, e.g.
 * `crlDistributionPoints=URI:http://127.0.0.1:1234/int.crl`.
 */
export async function issue(
  dir: string,
  name: string,
  issuerName: string,
  opts: { cn: string; ext: string; serial?: string },
): Promise<Issued> {
  const f = (n: string) => join(dir, n);
  await ok([
    'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${opts.cn}`,
  ]); // prettier-ignore
  await writeFile(f(`${name}.ext`), opts.ext + '\n');
  await ok([
    'x509', '-req', '-in', f(`${name}.csr`), '-CA', f(`${issuerName}.crt`), '-CAkey', f(`${issuerName}.key`),
    '-set_serial', opts.serial ?? `0x${Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString('hex')}`,
    '-days', '30', '-extfile', f(`${name}.ext`), '-out', f(`${name}.crt`),
  ]); // prettier-ignore
  return load(dir, name);
}

const asn1Time = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z'); // YYYYMMDDHHMMSSZ
const utcTime = (d: Date) => asn1Time(d).slice(2); // the index file wants YYMMDDHHMMSSZ

/** A DER CRL from `openssl ca -gencrl` for `issuerName` (files in `dir`), listing `revoked`, at the given times. */
export async function opensslCrl(
  dir: string,
  issuerName: string,
  opts: { lastUpdate: Date; nextUpdate: Date; revoked?: Issued[] },
): Promise<Uint8Array> {
  const f = (n: string) => join(dir, n);
  const index = (opts.revoked ?? []).map(
    (c) =>
      `R\t${utcTime(c.cert.notAfter)}\t${utcTime(opts.lastUpdate)}\t${c.cert.serialNumber.toUpperCase()}\tunknown\t/CN=x\n`,
  );
  await writeFile(f(`${issuerName}.index`), index.join(''));
  await writeFile(f(`${issuerName}.index.attr`), 'unique_subject = no\n');
  await writeFile(f(`${issuerName}.crlnumber`), '01\n');
  await writeFile(
    f(`${issuerName}.ca.cnf`),
    `[ca]\ndefault_ca = d\n[d]\ndatabase = ${f(`${issuerName}.index`)}\ncrlnumber = ${f(`${issuerName}.crlnumber`)}\n` +
      `default_md = sha256\ncrl_extensions = crl_ext\n[crl_ext]\nauthorityKeyIdentifier = keyid:always\n`,
  );
  const out = f(`${issuerName}.crl`);
  await ok([
    'ca', '-batch', '-config', f(`${issuerName}.ca.cnf`), '-gencrl', '-cert', f(`${issuerName}.crt`),
    '-keyfile', f(`${issuerName}.key`), '-crl_lastupdate', asn1Time(opts.lastUpdate),
    '-crl_nextupdate', asn1Time(opts.nextUpdate), '-out', out,
  ]); // prettier-ignore
  return pemToDer(await readFile(out, 'utf8'));
}

/**
 * A DER CRL named for `issuer` but signed by `signingKey`, for what `openssl ca` refuses to make (a wrong key, no
 * nextUpdate). No entries: @peculiar/x509's generator encodes revoked serials wrongly.
 */
export async function makeCrl(opts: {
  issuer: x509.X509Certificate;
  signingKey: CryptoKey;
  thisUpdate: Date;
  nextUpdate?: Date;
}): Promise<Uint8Array> {
  const crl = await x509.X509CrlGenerator.create({
    issuer: opts.issuer.subjectName,
    thisUpdate: opts.thisUpdate,
    ...(opts.nextUpdate ? { nextUpdate: opts.nextUpdate } : {}),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    signingKey: opts.signingKey,
  });
  return new Uint8Array(crl.rawData);
}

export async function rogueKey(): Promise<CryptoKey> {
  const pair = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  return pair.privateKey;
}
