// Types for signet.js, the host-page helper of Signet embedded signing (served at /embed/signet.js). Use them with
// `/// <reference path="signet.d.ts" />` (the global `Signet`) or `import type { SignetMessage } from './signet.js'`.

/** What the signing page reports to its host. */
export type SignetEventType = 'ready' | 'viewed' | 'signed' | 'declined' | 'expired' | 'error' | 'resize';

/** The `data` of each message type. */
export interface SignetEventData {
  ready: Record<string, unknown>;
  viewed: Record<string, unknown>;
  signed: Record<string, unknown>;
  declined: { reason?: string; [key: string]: unknown };
  expired: Record<string, unknown>;
  error: { code: string; [key: string]: unknown };
  /** The height the signing page needs, in CSS pixels. */
  resize: { height: number; [key: string]: unknown };
}

/**
 * A message from the signing page, as delivered to the callbacks. `SignetMessage` alone is the union of all types,
 * narrowed by `type`; `SignetMessage<'signed'>` is one of them.
 */
export type SignetMessage<T extends SignetEventType = SignetEventType> = {
  [K in T]: {
    source: 'signet';
    version: 1;
    type: K;
    session_id: string;
    signing_request_id: string;
    data: SignetEventData[K];
  };
}[T];

export interface MountOptions {
  /** The iframe's accessible name. Default "Document signing". */
  title?: string;
  /** The iframe's height until the page sends `resize`: a number of CSS pixels or a CSS length. Default 600px. */
  height?: number | string;
  onReady?: (message: SignetMessage<'ready'>) => void;
  onViewed?: (message: SignetMessage<'viewed'>) => void;
  /** Terminal: afterwards no signed, declined, expired or error message is delivered. */
  onSigned?: (message: SignetMessage<'signed'>) => void;
  /** Terminal. */
  onDeclined?: (message: SignetMessage<'declined'>) => void;
  /** Terminal. */
  onExpired?: (message: SignetMessage<'expired'>) => void;
  onError?: (message: SignetMessage<'error'>) => void;
  /** Every accepted message, resize included; called after the type's own callback. */
  onEvent?: (message: SignetMessage) => void;
}

export interface Mounted {
  /** The iframe appended to the element. */
  readonly iframe: HTMLIFrameElement;
  /** Stops listening and removes the iframe. Safe to call more than once. */
  unmount(): void;
}

export interface SignetStatic {
  /** Protocol version of the messages this helper accepts. */
  readonly version: 1;
  /**
   * Appends an iframe showing `sessionUrl` to `element` and reports the signing page's messages to `options`.
   * Only messages from that iframe on `sessionUrl`'s origin are accepted.
   * @param element the container, or a CSS selector for it
   * @param sessionUrl the session's absolute http(s) URL
   * @throws {TypeError} if the element is not found or the URL is not an absolute http(s) URL
   */
  mount(element: HTMLElement | string, sessionUrl: string | URL, options?: MountOptions): Mounted;
}

declare global {
  // `var` so that the helper is also `window.Signet`.
  var Signet: SignetStatic;
}
