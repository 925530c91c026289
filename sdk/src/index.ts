// @signet/sdk: a typed client for the Signet API and the webhook signature helpers.
export { Signet, SDK_VERSION, type SignetOptions, type RequestOptions } from './client.js';
export { SignetError, type RateLimitInfo } from './errors.js';
export {
  webhooks,
  verify,
  sign,
  signatureHeader,
  WebhookVerificationError,
  DEFAULT_TOLERANCE_SECONDS,
  type WebhookErrorCode,
  type HeadersInput,
  type RawBody,
  type VerifyOptions,
  type SignOptions,
  type Webhooks,
} from './webhooks.js';
export * from './events.js';
export type * from './types.js';
