// Signer verification's row type (migration 011), beside schema.ts to keep that file under the length limit.

/** One code sent to a signer: only its hash is kept (keyed by the row id), with its expiry and wrong tries. */
export type SignerCodesTable = {
  id: string;
  workspace_id: string;
  document_id: string;
  signing_request_id: string;
  /** 1, 2, … per signing request: the newest code is the highest (sends can share a millisecond). */
  seq: number;
  /** `email_code` or `sms_code`. */
  method: string;
  code_hash: string;
  tries: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
};

/** One OAuth round trip of a qualified signer with their provider (migration 013). */
export type QesCeremoniesTable = {
  id: string;
  workspace_id: string;
  document_id: string;
  signing_request_id: string;
  /** `identify` (scope service: who is the signer, which credential) or `authorize` (scope credential: one hash). */
  stage: string;
  /** SHA-256 of the OAuth `state` sent to the provider. */
  state_hash: string;
  /** The PKCE S256 challenge; its verifier is only in the signer's browser (a cookie). */
  challenge: string;
  /** JSON: what the signer filled in and their visible signature, applied when the qualified signature lands. */
  inputs: string;
  /** JSON: the chosen credential (id, certificate chain, algorithm), from `identify` on. */
  credential: string | null;
  /** SHA-256 of the revision the prepared one extends: the document must still be at it when the signature lands. */
  base_sha256: string | null;
  /** The prepared revision (placeholder in /Contents), a blob. */
  prepared_blob: string | null;
  /** JSON: signed attributes, placeholder offsets and the hash authorized. */
  to_sign: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
};
