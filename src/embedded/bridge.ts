// What the framed page's bridge (assets/bridge.js) is told by the server: where to post (the session's origin, the
// only targetOrigin it ever uses), the ids every message carries, and, on a page that has ended, the one event that
// says why. Messages follow the wire shape {source: "signet", version: 1, type, session_id, signing_request_id, data}.
import type { RequestRow } from '../signing/signing.repo.js';
import type { EmbedEventType } from './embedded.schemas.js';
import type { SessionRow } from './sessions.repo.js';

export type EndedEvent = { type: EmbedEventType; data: Record<string, unknown> };

/** Why an ended page ended, as the event its host receives. */
export function endedEvent(state: string, r: RequestRow): EndedEvent {
  switch (state) {
    case 'session_expired':
    case 'expired':
      return { type: 'expired', data: {} };
    case 'signed':
      return { type: 'signed', data: {} };
    case 'declined':
      return { type: 'declined', data: { reason: r.decline_reason ?? '' } };
    default:
      return { type: 'error', data: { code: 'request_not_signable' } };
  }
}

export const bridgeData = (s: SessionRow, ended: EndedEvent | null) => ({
  source: 'signet',
  version: 1,
  origin: s.origin,
  session_id: s.id,
  signing_request_id: s.signing_request_id,
  ended,
});
