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
