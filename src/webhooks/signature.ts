// Delivery signing exactly as the spec states: v1 = hex HMAC-SHA256(secret, `${t}.${rawBody}`), fresh t per attempt.
import { createHmac, randomBytes } from 'node:crypto';

export const USER_AGENT = 'service-webhooks/1.0';

/** `whsec_` + 32 random bytes base64url; the HMAC key is the whole string as UTF-8 (Stripe's rule). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

// The signed text in two updates: `${t}.${body}` as one string would copy the body into a new string per attempt.
export const signatureHeader = (secret: string, unixSeconds: number, body: string): string =>
  `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex')}`;

/** Both header families, byte-identical, plus the fixed User-Agent. */
export function deliveryHeaders(
  secret: string,
  unixSeconds: number,
  eventId: string,
  eventName: string,
  body: string,
): Record<string, string> {
  const sig = signatureHeader(secret, unixSeconds, body);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-signature': sig,
    'x-service-event-id': eventId,
    'x-service-event': eventName,
    'x-legacy-signature': sig,
    'x-legacy-event-id': eventId,
    'x-legacy-event': eventName,
  };
}
