// The two callbacks' work after the code exchange. identified(): the signer's credential and certificate are checked,
// the document is locked for them, and the revision they sign is made (the document as it stands after the signers
// before them, their own values stamped incrementally, an empty signature field) with its one hash.
// landSignature(): signHash for that hash, the answer verified against the certificate, timestamped, written into the
// prepared revision with the signer's chain and CRLs (a DSS update), and committed only if the document is still at
// the revision it was prepared from. Guarantees: nothing is written to the document before the provider's signature
// verifies; each revision extends the previous byte for byte (earlier signatures keep verifying).
import { sha256, toHex } from '../pki/cms.js';
import type { ClientMeta } from '../http/request-context.js';
import type { Tsa } from '../pki/types.js';
import type { RevocationFetcher } from '../pki/revocation-fetch.js';
import { appendDss } from '../documents/pdf/ltv.js';
import { prepareSignatureField, writeContents } from '../documents/pdf/signature-field.js';
import { SEAL_PLACEHOLDER_BYTES } from '../documents/pdf/seal.js';
import { stampsFor } from '../signing/sealing.js';
import type { SignInput } from '../signing/sign-input.js';
import { assertSignable, commitSignature, reread, type SigningDeps } from '../signing/signing.service.js';
import type { RequestRow } from '../signing/signing.repo.js';
import { transition } from '../signing/transition.js';
import { checkCredentialCert } from './certificate.js';
import { SHA256_OID, type CredentialInfo, type CscClient, type ProviderInfo } from './csc-client.js';
import { CEREMONY_TTL_MS, newCeremony, qesAudit, refuse, type Answer } from './ceremony.js';
import { endCeremonies, insertCeremony, setQesRevision, takeQesLock, type CeremonyRow } from './qes.repo.js';
import {
  assemble,
  cscSignAlgo,
  keyKindOf,
  signedAttributes,
  verifySignatureValue,
  type KeyKind,
} from './signer-cms.js';

/** The configured provider, as the ceremony uses it (runtime.ts builds it from QES_*). */
export type QesService = {
  client: CscClient;
  clientId: string;
  /** The provider's name from `info`, read at start: what the signer page calls it. */
  name: string;
  info(): Promise<ProviderInfo>;
  /** The provider's CA certificates (QES_CA_FILE): the anchors its signers' certificates must chain to. */
  anchorsDer: Uint8Array[];
  revocation: RevocationFetcher;
  /** The TSA that stamps signature values (the seal's: TSA_URL or the local one). */
  tsa(): Promise<Tsa>;
};

export type QesDeps = SigningDeps & { qes: QesService };

type Credential = { id: string; chain: string[]; kind: KeyKind; subject: string; issuer: string; serial: string };
type ToSign = { attrs: string; hash: string; contentsOffset: number; contentsHexLength: number };

const MAX_CREDENTIALS = 10;
const der = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/** The first credential whose key is enabled and of a kind we sign with. */
async function chooseCredential(client: CscClient, token: string): Promise<CredentialInfo | null> {
  for (const id of (await client.listCredentials(token)).slice(0, MAX_CREDENTIALS)) {
    const info = await client.credentialInfo(token, id);
    if (info.keyStatus === 'enabled' && keyKindOf(info.chainDer[0]!)) return info;
  }
  return null;
}

function inputOf(c: CeremonyRow): SignInput {
  const { signature, values } = JSON.parse(c.inputs) as {
    signature: SignInput['signature'];
    values: SignInput['values'];
  };
  const png =
    signature.type === 'drawn'
      ? new Uint8Array(Buffer.from(signature.png_base64.replace(/^data:image\/png;base64,/, ''), 'base64'))
      : null;
  return { signature, png, values };
}

export async function identified(
  deps: QesDeps,
  c: CeremonyRow,
  found: RequestRow,
  token: string,
  accessToken: string,
  meta: ClientMeta,
  retryHref: string,
): Promise<Answer> {
  const provider = (await deps.qes.info()).name;
  const info = await chooseCredential(deps.qes.client, accessToken);
  if (!info) return refuse(deps, c, meta, 'no_credential', {}, retryHref);
  const check = await checkCredentialCert(info.chainDer, {
    anchorsDer: deps.qes.anchorsDer,
    revocation: deps.qes.revocation,
    now: deps.clock.now(),
  });
  const cert = check.summary ?? { subject: '', issuer: '', serial: '' };
  if (!check.ok) return refuse(deps, c, meta, check.reason, { credential_id: info.id, ...cert }, retryHref);

  const now = deps.clock.now();
  const base = await transition(deps, c.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    await qesAudit(tx, doc, r, meta, 'qes.credential_checked', {
      provider,
      credential_id: info.id,
      scal: info.scal,
      ...cert,
    });
    if (!(await takeQesLock(tx.trx, doc.id, r.id, now + CEREMONY_TTL_MS, tx.now))) return { busy: doc.locale };
    return { blob: doc.qes_blob ?? doc.prepared_blob, sha256: doc.qes_sha256 ?? doc.prepared_sha256, doc, r };
  });
  if ('busy' in base)
    return { kind: 'page', outcome: 'busy', status: 409, retryHref, clearCookie: true, locale: base.busy };

  const input = inputOf(c);
  const signer: RequestRow = {
    ...base.r,
    signed_at: now,
    signature_text: input.signature.type === 'typed' ? input.signature.text.trim() : null,
    field_values: JSON.stringify(input.values),
  };
  const pngs = new Map(input.png ? [[signer.id, input.png]] : []);
  let prepared;
  try {
    const stamped = await deps.pdf.stamp(await deps.blobs.get(base.blob), stampsFor(base.doc, [signer], pngs), {
      incremental: true,
    });
    prepared = prepareSignatureField(stamped, {
      kind: 'signature',
      fieldName: `Signature of ${signer.name}`,
      name: signer.name,
      reason: `Qualified signature: ${base.doc.title}`.slice(0, 200),
      signingTimeMs: now,
      placeholderBytes: SEAL_PLACEHOLDER_BYTES,
    });
  } catch (err) {
    await refuse(deps, c, meta, 'refused', { error: 'the revision to sign could not be prepared' });
    throw err;
  }
  const chosen = info.chainDer[0]!;
  const attrs = signedAttributes(prepared.digest, chosen);
  const credential: Credential = { id: info.id, chain: info.chainDer.map(b64), kind: keyKindOf(chosen)!, ...cert };
  const toSign: ToSign = {
    attrs: b64(attrs.der),
    hash: b64(attrs.hash),
    contentsOffset: prepared.contentsOffset,
    contentsHexLength: prepared.contentsHexLength,
  };
  return transition(deps, c.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    const next = await newCeremony(deps, r, token, tx.now, {
      stage: 'authorize',
      inputs: c.inputs,
      extra: {
        credential: JSON.stringify(credential),
        base_sha256: base.sha256,
        prepared_blob: await deps.blobs.put(prepared.pdf, 'qes-prepared', tx.trx),
        to_sign: JSON.stringify(toSign),
      },
      query: {
        credentialID: info.id,
        numSignatures: '1',
        hashes: Buffer.from(attrs.hash).toString('base64url'),
        hashAlgorithmOID: SHA256_OID,
      },
    });
    await insertCeremony(tx.trx, next.row);
    await qesAudit(tx, doc, r, meta, 'qes.authorization_started', { provider, hash: toHex(attrs.hash) });
    return { kind: 'redirect', url: next.url, cookie: next.cookie } as const;
  });
}

export async function landSignature(
  deps: QesDeps,
  c: CeremonyRow,
  found: RequestRow,
  accessToken: string,
  meta: ClientMeta,
  retryHref: string,
): Promise<Answer> {
  const provider = (await deps.qes.info()).name;
  const cred = JSON.parse(c.credential!) as Credential;
  const toSign = JSON.parse(c.to_sign!) as ToSign;
  const chain = cred.chain.map(der);
  const attrs = der(toSign.attrs);
  const signature = await deps.qes.client.signHash(accessToken, {
    credentialID: cred.id,
    hash: der(toSign.hash),
    signAlgo: cscSignAlgo(cred.kind),
  });
  const cert = { subject: cred.subject, issuer: cred.issuer, serial: cred.serial };
  if (!verifySignatureValue(attrs, signature, chain[0]!))
    return refuse(deps, c, meta, 'bad_signature', { credential_id: cred.id, ...cert }, retryHref);
  const tsa = await deps.qes.tsa();
  const ts = await tsa.timestamp(sha256(signature));
  const cms = assemble({
    signedAttrsDer: attrs,
    signature,
    chainDer: chain,
    kind: cred.kind,
    timestampToken: ts.tokenDer,
  });
  const pdf = await deps.blobs.get(c.prepared_blob!);
  const signedPdf = writeContents(
    { pdf, contentsOffset: toSign.contentsOffset, contentsHexLength: toSign.contentsHexLength },
    cms,
  );
  const revocation = await deps.qes.revocation.fetchFor(chain);
  const revision = appendDss(signedPdf, { certsDer: chain, crlsDer: revocation.crlsDer });
  const revisionSha = toHex(sha256(revision));

  const landed = await transition(deps, c.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    const current = doc.qes_sha256 ?? doc.prepared_sha256;
    const lockedByOther =
      doc.qes_lock_request_id && doc.qes_lock_request_id !== r.id && (doc.qes_lock_until ?? 0) > tx.now;
    if (current !== c.base_sha256 || lockedByOther) return false;
    await setQesRevision(tx.trx, doc.id, await deps.blobs.put(revision, 'qes-signed', tx.trx), revisionSha, tx.now);
    await endCeremonies(tx.trx, r.id, tx.now);
    await qesAudit(tx, doc, r, meta, 'qes.signed', {
      provider,
      credential_id: cred.id,
      ...cert,
      hash: toHex(der(toSign.hash)),
      timestamp: ts.signedAt,
      revision_sha256: revisionSha,
    });
    await commitSignature(deps, tx, doc, r, inputOf(c), meta, { provider, ...cert, signed_at: ts.signedAt });
    return true;
  });
  if (!landed) return refuse(deps, c, meta, 'busy', { error: 'the document changed while authorizing' }, retryHref);
  return { kind: 'redirect', url: retryHref };
}
