/** The identity that seals PDFs. Every field is structured-cloneable, so it can be posted to a seal worker as is. */
export type SealIdentity = {
  certDer: Uint8Array;
  /** Issuers of the seal certificate, nearest first; the leaf is not included. */
  chainDer: Uint8Array[];
  /** Non-extractable signing key (ECDSA or RSA). */
  privateKey: CryptoKey;
  /** Lowercase hex of the serial's magnitude (see serialHexOf). */
  serialHex: string;
};

export type TimestampResult = {
  /** RFC 3161 TimeStampToken: a ContentInfo holding SignedData over TSTInfo, DER. */
  tokenDer: Uint8Array;
  /** The token's genTime, ISO 8601 UTC with milliseconds. */
  signedAt: string;
};

/** A time-stamping authority: the embedded one or an RFC 3161 server. */
export type Tsa = {
  provider: string;
  timestamp(imprintSha256: Uint8Array): Promise<TimestampResult>;
};
