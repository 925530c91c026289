// Wire schemas of embedded signing (TypeBox): they validate the request, serialise the response and feed OpenAPI.
import { Type, type Static } from 'typebox';
import { EMBED_TTL_SECONDS, MAX_URL_LENGTH } from '../limits.js';
import { KNOWN_LOCALES } from '../i18n/i18n.js';

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
    locale: Type.String({ minLength: 1, maxLength: 35, description: `A known locale: ${KNOWN_LOCALES.join(', ')}.` }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        signing_request_id: 'sr_1a2b3c4d5e6f7a8b9c0d1e2f',
        origin: 'https://app.example.com',
        ttl_seconds: 600,
        locale: 'en',
      },
    ],
  },
);
export type SessionBody = Static<typeof SessionBody>;

export const SessionOut = Type.Object(
  {
    id: Type.String({ description: 'ses_…' }),
    url: Type.String({ description: '{BASE_URL}/embed/sign/<token>: frame it, or mount it with /embed/signet.js.' }),
    origin: Type.String(),
    signing_request_id: Type.String(),
    locale: Type.String(),
    expires_at: Type.String(),
  },
  {
    examples: [
      {
        id: 'ses_7a8b9c0d1e2f3a4b5c6d7e8f',
        url: 'https://signet.example.com/embed/sign/QS7psuy7Y5y4B_i_O1IGwbFqCCBgXHN2R7KYKd0sVxE',
        origin: 'https://app.example.com',
        signing_request_id: 'sr_1a2b3c4d5e6f7a8b9c0d1e2f',
        locale: 'en',
        expires_at: '2026-11-22T10:10:00.000Z',
      },
    ],
  },
);
export type SessionOut = Static<typeof SessionOut>;

/** What the framed page posts to its host (window.postMessage, targetOrigin = the session's origin). */
export const EMBED_EVENT_TYPES = ['ready', 'viewed', 'signed', 'declined', 'expired', 'error', 'resize'] as const;
export type EmbedEventType = (typeof EMBED_EVENT_TYPES)[number];
