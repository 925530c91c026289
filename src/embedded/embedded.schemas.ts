// Wire schemas of embedded signing (TypeBox): they validate the request, serialise the response and feed OpenAPI.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { EMBED_TTL_SECONDS, MAX_URL_LENGTH } from '../limits.js';

// All four are required and nothing is defaulted or clamped (spec: endpoint rule 1). The origin's form and the
// locale are checked by the service, after the ttl, so that their refusal names the field.
export const SessionBody = Type.Object(
  {
    signing_request_id: Type.String({ minLength: 1, maxLength: 64 }),
    origin: Type.String({
      minLength: 1,
      maxLength: MAX_URL_LENGTH,
      description: 'The page that will frame the session: a plain https origin registered on the API key.',
    }),
    ttl_seconds: Type.Integer({ minimum: EMBED_TTL_SECONDS.min, maximum: EMBED_TTL_SECONDS.max }),
    locale: Type.String({ minLength: 1, maxLength: 35, description: 'A known locale: en, de, fr or es.' }),
  },
  { additionalProperties: false },
);
export type SessionBody = Static<typeof SessionBody>;

export const SessionOut = Type.Object({
  id: Type.String({ description: 'ses_…' }),
  url: Type.String({ description: '{BASE_URL}/embed/sign/<token>: frame it, or mount it with /embed/signet.js.' }),
  origin: Type.String(),
  signing_request_id: Type.String(),
  locale: Type.String(),
  expires_at: Type.String(),
});
export type SessionOut = Static<typeof SessionOut>;

/** What the framed page posts to its host (window.postMessage, targetOrigin = the session's origin). */
export const EMBED_EVENT_TYPES = ['ready', 'viewed', 'signed', 'declined', 'expired', 'error', 'resize'] as const;
export type EmbedEventType = (typeof EMBED_EVENT_TYPES)[number];
