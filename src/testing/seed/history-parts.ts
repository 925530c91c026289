// Pieces of a seeded document's history (history.ts): the shared types, a template instance row, a delivery with its
// attempts, a signer's next reminder.
import { sha256Hex } from '../../lib/crypto.js';
import { EXPIRY_WARNING_MS, REVIEW_WINDOW_MS, WEBHOOK_MAX_ATTEMPTS } from '../../limits.js';
import type { RequestStatus } from '../../signing/states.js';
import type { InstanceStatus } from '../../templates/states.js';
import type { DeliveryStatus } from '../../webhooks/states.js';
import type { Rng } from './prng.js';
import type { RowBuffer } from './rows.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

export type SeedBlobs = {
  original: { key: string; sha256: string };
  prepared: { key: string; sha256: string };
  signed: { key: string; sha256: string };
};

export type SeedWorkspace = {
  id: string;
  name: string;
  keyId: string;
  /** Workspace hooks (not deleted) with their event filters; empty filter: all events. */
  hooks: { id: string; events: string[] }[];
  templates: { id: string; version: number }[];
  locale: string;
};

/** A fixed number of rows due for each scheduled job, whatever the size, so a job's run compares across sizes. */
export type Due = 'expiry' | 'reminder' | 'review';

export type HistoryContext = {
  rng: Rng;
  now: number;
  blobs: SeedBlobs;
  out: RowBuffer;
  baseUrl: string;
  /** Open requests' link tokens, kept for the first few (benches and tests open signer pages with them). */
  keepToken(documentId: string, requestId: string, token: string): void;
};

export type Signer = { id: string; slot: number; role: string; email: string; name: string; status: RequestStatus };

/** An open request's next reminder: due now for the fixed due set, otherwise ahead (null in the warning window). */
export function reminderAt(rng: Rng, now: number, expiresAt: number, due?: Due): number | null {
  if (due === 'reminder') return now - rng.int(1, 50) * MIN;
  const t = now + rng.int(1, 72) * HOUR;
  return t < expiresAt - EXPIRY_WARNING_MS ? t : null;
}

export function instanceRow(
  ctx: HistoryContext,
  ws: SeedWorkspace,
  tpl: { id: string; version: number },
  inst: { id: string; status: InstanceStatus },
  documentId: string,
  signers: Signer[],
  t0: number,
  closedAt: number | null,
): void {
  const { rng } = ctx;
  const status = inst.status;
  const reviewed = status !== 'confirmed' || rng.chance(0.3);
  ctx.out.push('template_instances', {
    id: inst.id,
    workspace_id: ws.id,
    template_id: tpl.id,
    template_version: tpl.version,
    kind: 'instantiate',
    status,
    document_id: documentId,
    recipients: JSON.stringify(signers.map((s) => ({ slot: s.role, name: s.name, email: s.email }))),
    field_values: '{}',
    review_token_hash: reviewed ? sha256Hex(rng.bytes(32).toString('base64url')) : null,
    review_expires_at: reviewed ? t0 + REVIEW_WINDOW_MS : null,
    staged_at: reviewed ? t0 : null,
    confirmed_at: status === 'confirmed' ? t0 : null,
    confirmed_by: status === 'confirmed' ? 'api' : null,
    discarded_at: status === 'discarded' ? closedAt : null,
    discard_reason: status === 'discarded' ? 'discarded' : null,
    created_by_key_id: ws.keyId,
    created_at: t0,
    updated_at: closedAt ?? t0,
  });
}

/** A delivery as the dispatcher leaves it: recent ones may still be due or retrying; old ones are settled. */
export function delivery(ctx: HistoryContext, workspaceId: string, eventId: string, hookId: string, t: number): void {
  const { rng, now, out } = ctx;
  const id = rng.orderedId('del', t);
  const r = rng.next();
  let status: DeliveryStatus = 'succeeded';
  let attempts = 1;
  if (t > now - 10 * MIN && r < 0.5) {
    status = 'pending';
    attempts = 0;
  } else if (r < 0.02) {
    status = 'giving_up';
    attempts = WEBHOOK_MAX_ATTEMPTS;
  } else if (r < 0.05) attempts = rng.int(2, 4);
  const last = t + attempts * 5 * MIN;
  out.push('deliveries', {
    id,
    event_id: eventId,
    hook_id: hookId,
    workspace_id: workspaceId,
    status,
    attempts,
    next_attempt_at: status === 'pending' ? t : null,
    last_status_code: attempts === 0 ? null : status === 'giving_up' ? 500 : 200,
    last_error: status === 'giving_up' ? 'HTTP 500' : null,
    created_at: t,
    updated_at: attempts === 0 ? t : last,
  });
  for (let a = 1; a <= attempts; a++) {
    const ok = status === 'succeeded' && a === attempts;
    out.push('delivery_attempts', {
      delivery_id: id,
      attempt: a,
      started_at: t + (a - 1) * 5 * MIN,
      duration_ms: rng.int(20, 400),
      status_code: ok ? 200 : 500,
      response_body: ok ? 'ok' : 'Internal Server Error',
      error: ok ? null : 'HTTP 500',
      worker: 'worker-1',
    });
  }
}

const TITLES = ['Service agreement', 'NDA', 'Employment contract', 'Lease', 'Purchase order', 'Consent form', 'Offer'];
/**
 * A kind of document no longer sent for a year: a search for it finds nothing among the newest documents and many
 * in the history (one older document in 8), the text index's costliest case.
 */
export const RETIRED_TITLE = 'Tenancy agreement';
const YEAR = 365 * 24 * HOUR;

/** The kind of document a title of one created at `t0` names. */
export const titleKind = (rng: Rng, now: number, t0: number): string =>
  t0 < now - YEAR && rng.chance(1 / 8) ? RETIRED_TITLE : rng.pick(TITLES);
