// Worker side of sealing (see seal.ts for the guarantees): prepareSeal adds the signature placeholder, either by
// rewriting the PDF with pdf-lib (saved without object streams) or, with `incremental`, as one incremental update
// (signature-field.ts, byte-level), then hashes and signs. Imported by seal.worker.ts, and by tests through sealPdf,
// never by the caller's thread in the service.
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { PDFDocument } from 'pdf-lib';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { findByteRange, SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import { systemClock } from '../../lib/clock.js';
import { ab, attr, OID, parseCert, signingCertificateV2 } from '../../pki/cms.js';
import { pdfText } from './pdf-text.js';
import {
  SEAL_PLACEHOLDER_BYTES,
  timestampAndFinish,
  type PreparedSeal,
  type SealKey,
  type SealMeta,
  type SealOptions,
  type SealResult,
} from './seal.js';
import { prepareSignatureField, type PreparedSignatureField } from './signature-field.js';

/** Both steps in this thread, for tests and tools; the service seals through createSealer's workers. */
export async function sealPdf(pdf: Uint8Array, opts: SealOptions): Promise<SealResult> {
  const prepared = await prepareSeal(pdf, opts.seal, opts, (opts.clock ?? systemClock).now());
  return timestampAndFinish(prepared, opts.seal, opts.tsa, opts.longTerm);
}

export async function prepareSeal(
  input: Uint8Array,
  seal: SealKey,
  meta: SealMeta,
  signingTimeMs: number,
): Promise<PreparedSeal> {
  const leaf = parseCert(seal.certDer);
  const field = meta.incremental
    ? prepareSignatureField(input, {
        kind: 'signature',
        fieldName: 'Signet seal',
        name: meta.name ?? commonName(leaf),
        reason: meta.reason,
        location: meta.location,
        contactInfo: meta.contactInfo,
        signingTimeMs,
        placeholderBytes: SEAL_PLACEHOLDER_BYTES,
      })
    : await rewriteWithPlaceholder(input, leaf, meta, signingTimeMs);

  const sd = new pkijs.SignedData({
    version: 1,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    signerInfos: [
      new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({ issuer: leaf.issuer, serialNumber: leaf.serialNumber }),
        signedAttrs: new pkijs.SignedAndUnsignedAttributes({
          type: 0,
          attributes: [
            attr(OID.contentType, new asn1js.ObjectIdentifier({ value: OID.data })),
            attr(OID.messageDigest, new asn1js.OctetString({ valueHex: ab(field.digest) })),
            signingCertificateV2(leaf, seal.certDer),
          ],
        }),
      }),
    ],
    certificates: [leaf, ...seal.chainDer.map(parseCert)],
  });
  await sd.sign(seal.privateKey, 0, 'SHA-256');
  const sdFields = (sd.toSchema(true) as asn1js.Sequence).valueBlock.value;
  const siFields = (sd.signerInfos[0].toSchema() as asn1js.Sequence).valueBlock.value;
  return {
    pdf: field.pdf,
    contentsOffset: field.contentsOffset,
    contentsHexLength: field.contentsHexLength,
    signedDataHead: Buffer.concat(sdFields.slice(0, -1).map((f) => new Uint8Array(f.toBER()))),
    signerInfoBody: Buffer.concat(siFields.map((f) => new Uint8Array(f.toBER()))),
    signatureValue: new Uint8Array(sd.signerInfos[0].signature.valueBlock.valueHexView),
  };
}

/** The file rewritten by pdf-lib with @signpdf's placeholder, its /ByteRange filled in and hashed. */
async function rewriteWithPlaceholder(
  input: Uint8Array,
  leaf: pkijs.Certificate,
  meta: SealMeta,
  signingTimeMs: number,
): Promise<PreparedSignatureField> {
  // updateMetadata: false keeps Producer/ModDate as they were; the seal should not edit the document's info.
  const doc = await PDFDocument.load(input, { updateMetadata: false });
  pdflibAddPlaceholder({
    pdfDoc: doc,
    name: pdfText(meta.name ?? commonName(leaf)),
    reason: pdfText(meta.reason ?? ''),
    location: pdfText(meta.location ?? ''),
    contactInfo: pdfText(meta.contactInfo ?? ''),
    signingTime: new Date(signingTimeMs),
    // pdf-lib writes this many placeholder characters, each later holding one hex digit.
    signatureLength: SEAL_PLACEHOLDER_BYTES * 2,
    subFilter: SUBFILTER_ETSI_CADES_DETACHED,
  });
  // Without object streams: about 25% faster to write (no object-stream deflate) for a slightly larger file.
  const saved = await doc.save({ useObjectStreams: false });
  const pdf = Buffer.from(saved.buffer, saved.byteOffset, saved.byteLength);

  const { byteRangePlaceholder, byteRangePlaceholderPosition } = findByteRange(pdf);
  if (!byteRangePlaceholder || byteRangePlaceholderPosition === undefined)
    throw new Error('seal: no ByteRange placeholder in the saved PDF');
  const afterRange = byteRangePlaceholderPosition + byteRangePlaceholder.length;
  const open = pdf.indexOf('<', pdf.indexOf('/Contents', afterRange));
  const close = open + 1 + SEAL_PLACEHOLDER_BYTES * 2;
  if (open < 0 || pdf[close] !== 0x3e /* > */) throw new Error('seal: /Contents placeholder not where expected');
  const byteRange = [0, open, close + 1, pdf.length - (close + 1)];
  const rangeText = `/ByteRange [${byteRange.join(' ')}]`.padEnd(byteRangePlaceholder.length, ' ');
  if (rangeText.length !== byteRangePlaceholder.length) throw new Error('seal: ByteRange does not fit its placeholder');
  pdf.write(rangeText, byteRangePlaceholderPosition, 'latin1');
  // pdf-lib wrote NUL placeholders; verifiers expect hex '0' padding after the DER, which finishSeal leaves in place.
  pdf.fill(0x30, open + 1, close);

  const digest = createHash('sha256')
    .update(pdf.subarray(0, open))
    .update(pdf.subarray(close + 1))
    .digest();
  return {
    pdf: new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength),
    contentsOffset: open + 1,
    contentsHexLength: close - open - 1,
    digest: new Uint8Array(digest),
  };
}

function commonName(cert: pkijs.Certificate): string {
  const cn = cert.subject.typesAndValues.find((tv) => tv.type === '2.5.4.3');
  return cn ? String(cn.value.valueBlock.value) : 'Signet';
}
