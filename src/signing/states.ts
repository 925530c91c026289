// The states of documents and signing requests, and every move between them: the spec's "States and transitions"
// for signing in one table. Signing code changes a status only through `moveRequest`/`moveDocument`
// (signing.repo.ts), which take a move named here and refuse a row that is not in one of its `from` states.
import { LIVE_DOCUMENT_STATUSES } from '../jobs/prune.repo.js';

/**
 * A signing request is one signer's invitation. `queued` waits for its turn in sequential mode; `pending` has been
 * sent; `viewed` was opened. The other four are final.
 */
export const REQUEST_STATUSES = ['queued', 'pending', 'viewed', 'signed', 'declined', 'withdrawn', 'expired'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/**
 * A document is `in_progress` until it is completed (sealed), declined, withdrawn or expired. A document made from
 * a template with `review: true` is a `draft` (nobody invited, nothing sealed) until its instance is confirmed
 * (→ `in_progress`) or discarded (→ `discarded`).
 */
export const DOCUMENT_STATUSES = [
  'draft',
  'in_progress',
  'completed',
  'declined',
  'withdrawn',
  'expired',
  'discarded',
] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/**
 * Sealing of an in-progress document: `pending` once every signer signed (or a generated file was confirmed), `done`
 * with the sealed file.
 */
export const SEAL_STATES = ['none', 'pending', 'done'] as const;
export type SealState = (typeof SEAL_STATES)[number];

type Move<S extends string> = { readonly from: readonly S[]; readonly to: S };

/** Sealing moves, each made once: queued for the sealing job, then sealed by it (under its lease). */
export const SEAL_MOVES = {
  queue: { from: ['none'], to: 'pending' },
  complete: { from: ['pending'], to: 'done' },
} as const satisfies Record<string, Move<SealState>>;

/** Signing-request moves. The spec's rows: sign (pending → signed) and the hourly expiry (pending|viewed → expired). */
export const REQUEST_MOVES = {
  /** Sequential mode: the next signer's turn. Emits nothing (the spec: no new `signing_request.sent`). */
  release: { from: ['queued'], to: 'pending' },
  /** The signer opened the page: `signing_request.viewed`, once. */
  view: { from: ['pending'], to: 'viewed' },
  /** `signing_request.signed`. */
  sign: { from: ['pending', 'viewed'], to: 'signed' },
  /** `signing_request.declined`; the document is declined. */
  decline: { from: ['pending', 'viewed'], to: 'declined' },
  /** By the sender, or because the document closed. */
  withdraw: { from: ['queued', 'pending', 'viewed'], to: 'withdrawn' },
  /** The hourly job: `signing_request.expired`, once per request. */
  expire: { from: ['pending', 'viewed'], to: 'expired' },
  /** Queued followers of an expired request: silently. */
  expire_queued: { from: ['queued'], to: 'expired' },
} as const satisfies Record<string, Move<RequestStatus>>;
export type RequestMove = keyof typeof REQUEST_MOVES;

/** Document moves. The spec's row: completed (`document.completed`) only after every signer row is signed. */
export const DOCUMENT_MOVES = {
  /** Sealed: `document.completed`. */
  complete: { from: ['in_progress'], to: 'completed' },
  decline: { from: ['in_progress'], to: 'declined' },
  withdraw: { from: ['in_progress'], to: 'withdrawn' },
  expire: { from: ['in_progress'], to: 'expired' },
  /** A staged template instance was confirmed: its signers are invited (or its file sealed). */
  send: { from: ['draft'], to: 'in_progress' },
  /** A staged template instance was discarded, by hand or when its review window closed. */
  discard: { from: ['draft'], to: 'discarded' },
} as const satisfies Record<string, Move<DocumentStatus>>;
export type DocumentMove = keyof typeof DOCUMENT_MOVES;

/** A document in one of these has ended: nothing can change it any more, and it may be purged. */
export const ENDED_DOCUMENT_STATUSES: readonly DocumentStatus[] = DOCUMENT_STATUSES.filter(
  (s) => !(LIVE_DOCUMENT_STATUSES as readonly string[]).includes(s),
);
export const isEndedDocument = (status: string): boolean =>
  (ENDED_DOCUMENT_STATUSES as readonly string[]).includes(status);

/** Whether a request in `status` can make `move`. */
export const canMoveRequest = (move: RequestMove, status: string): boolean =>
  (REQUEST_MOVES[move].from as readonly string[]).includes(status);

/** Requests a signer can still act on (view, sign, decline); the ones the hourly job expires. */
export const OPEN_REQUEST_STATUSES: readonly RequestStatus[] = REQUEST_MOVES.sign.from;
export const isOpenRequest = (status: string): boolean => canMoveRequest('sign', status);

// The prune jobs keep every row of a live document; their list must name statuses of this table.
LIVE_DOCUMENT_STATUSES satisfies readonly DocumentStatus[];
