// Reading X.509 certificates for verification: names as text, the summary reports show, and the extensions a
// path check needs. Readers return null (or []) for an absent or unreadable extension instead of throwing.
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import * as x509 from '@peculiar/x509';
import { serialHexOf } from './cms.js';

export type CertSummary = {
  /** RFC 4514 text, e.g. "CN=Signet Document Seal, OU=Installation 1a2b3c4d, O=Signet". */
  subject: string;
  issuer: string;
  /** Lowercase hex of the serial's magnitude (serialHexOf). */
  serial: string;
};

export function nameText(name: pkijs.RelativeDistinguishedNames): string {
  try {
    return new x509.Name(name.toSchema().toBER()).toString();
  } catch {
    return '';
  }
}

export const certSummary = (cert: pkijs.Certificate): CertSummary => ({
  subject: nameText(cert.subject),
  issuer: nameText(cert.issuer),
  serial: serialHexOf(cert),
});

const ext = (cert: pkijs.Certificate, oid: string) => cert.extensions?.find((e) => e.extnID === oid);

/** KeyUsage bit numbers (RFC 5280 §4.2.1.3). */
export const KU = { digitalSignature: 0, nonRepudiation: 1, keyCertSign: 5, cRLSign: 6 } as const;

/** The KeyUsage bits set, or null when the certificate has no KeyUsage extension (any use allowed). */
export function keyUsage(cert: pkijs.Certificate): Set<number> | null {
  const e = ext(cert, '2.5.29.15');
  if (!e) return null;
  const bits = e.parsedValue instanceof asn1js.BitString ? e.parsedValue.valueBlock.valueHexView : new Uint8Array();
  const out = new Set<number>();
  bits.forEach((byte, i) => {
    for (let b = 0; b < 8; b++) if (byte & (0x80 >> b)) out.add(i * 8 + b);
  });
  return out;
}

/** Extended key usage purposes and whether the extension is critical, or null without the extension. */
export function extKeyUsage(cert: pkijs.Certificate): { purposes: string[]; critical: boolean } | null {
  const e = ext(cert, '2.5.29.37');
  if (!e) return null;
  const purposes = e.parsedValue instanceof pkijs.ExtKeyUsage ? e.parsedValue.keyPurposes : [];
  return { purposes, critical: e.critical };
}

/** BasicConstraints: whether the certificate is a CA and its path length limit. */
export function basicConstraints(cert: pkijs.Certificate): { ca: boolean; pathLen: number | null } {
  const e = ext(cert, '2.5.29.19');
  if (!e || !(e.parsedValue instanceof pkijs.BasicConstraints)) return { ca: false, pathLen: null };
  const p = e.parsedValue;
  const pathLen =
    typeof p.pathLenConstraint === 'number' ? p.pathLenConstraint : (p.pathLenConstraint?.valueBlock.valueDec ?? null);
  return { ca: p.cA === true, pathLen };
}

/** Subject key identifier bytes as hex, or null. */
export function subjectKeyId(cert: pkijs.Certificate): string | null {
  const e = ext(cert, '2.5.29.14');
  return e?.parsedValue instanceof asn1js.OctetString
    ? Buffer.from(e.parsedValue.valueBlock.valueHexView).toString('hex')
    : null;
}

/** Authority key identifier's keyIdentifier as hex, or null. */
export function authorityKeyId(cert: pkijs.Certificate): string | null {
  const e = ext(cert, '2.5.29.35');
  const id = e?.parsedValue instanceof pkijs.AuthorityKeyIdentifier ? e.parsedValue.keyIdentifier : undefined;
  return id ? Buffer.from(id.valueBlock.valueHexView).toString('hex') : null;
}

/** ETSI EN 319 412-5 QC statements (id-etsi-qcs-*) and the RFC 3739 extension that carries them. */
export const QC = {
  statements: '1.3.6.1.5.5.7.1.3',
  compliance: '0.4.0.1862.1.1',
  sscd: '0.4.0.1862.1.4',
  type: '0.4.0.1862.1.6',
  typeEsign: '0.4.0.1862.1.6.1',
} as const;

/** The QC statement ids a certificate declares, and the QcType ids; empty when it has none or they are unreadable. */
export function qcStatements(cert: pkijs.Certificate): { ids: string[]; types: string[] } {
  const e = ext(cert, QC.statements);
  const out = { ids: [] as string[], types: [] as string[] };
  if (!e) return out;
  try {
    const parsed = asn1js.fromBER(e.extnValue.valueBlock.valueHexView);
    if (!(parsed.result instanceof asn1js.Sequence)) return out;
    for (const st of parsed.result.valueBlock.value) {
      if (!(st instanceof asn1js.Sequence)) continue;
      const [id, info] = st.valueBlock.value;
      if (!(id instanceof asn1js.ObjectIdentifier)) continue;
      const oid = id.valueBlock.toString();
      out.ids.push(oid);
      if (oid === QC.type && info instanceof asn1js.Sequence)
        for (const t of info.valueBlock.value)
          if (t instanceof asn1js.ObjectIdentifier) out.types.push(t.valueBlock.toString());
    }
  } catch {
    return { ids: [], types: [] };
  }
  return out;
}

/**
 * A qualified certificate for electronic signatures whose key is on a qualified signature creation device: what a
 * QES needs of its certificate (eIDAS art. 3(12)). QcCompliance and QcSSCD present; a QcType, when given, names esign.
 */
export function isQualifiedForSignatures(cert: pkijs.Certificate): boolean {
  const qc = qcStatements(cert);
  const typed = qc.ids.includes(QC.type);
  return qc.ids.includes(QC.compliance) && qc.ids.includes(QC.sscd) && (!typed || qc.types.includes(QC.typeEsign));
}
