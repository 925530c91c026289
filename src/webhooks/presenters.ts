// The wire format of hooks and deliveries, written once (API, CLI). A hook's secret appears only at creation.
import { iso } from '../lib/clock.js';
import type { DeliveryRecord } from './history.repo.js';
import type { DeliveryStatus } from './states.js';
import type { Hook } from './hooks.repo.js';
import type { DeliveryView, HookCreated, HookView } from './hooks.schemas.js';

export const presentHook = (h: Hook): HookView => ({
  id: h.id,
  target_url: h.target_url,
  events: JSON.parse(h.events) as string[],
  created_at: iso(h.created_at),
  document_id: h.document_id,
});

/** The creation answer: the only time the secret leaves the service. */
export const presentCreatedHook = (h: Hook): HookCreated => ({ ...presentHook(h), secret: h.secret });

/** A delivery with every attempt (time, status, latency, error) and when the next one is due. */
export const presentDelivery = ({ row: r, attempts }: DeliveryRecord): DeliveryView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  event_id: r.event_id,
  event: r.name,
  hook_id: r.hook_id,
  status: r.status as DeliveryStatus,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
  created_at: iso(r.created_at),
  last_status_code: r.last_status_code,
  last_error: r.last_error,
  attempts_log: attempts.map((a) => ({
    attempt: a.attempt,
    started_at: iso(a.started_at),
    duration_ms: a.duration_ms,
    status_code: a.status_code,
    error: a.error,
    response_body: a.response_body,
  })),
});
