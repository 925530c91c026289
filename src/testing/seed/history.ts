// One document's whole history as the app would have written it: the document row, one request per signer in the
// state its story reached, the audit hash chain (entryHash, the app's own), the events and deliveries of the
// outbox with their attempts, and the mail rows. Statuses come from the typed tables (signing/states.ts, …).
import { entryHash, GENESIS_HASH } from '../../documents/audit.repo.js';
import type { Field } from '../../documents/pdf/types.js';
import { iso } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { DEFAULT_EXPIRY_MS, EXPIRY_WARNING_MS, RETENTION_DEFAULTS, REVIEW_WINDOW_MS } from '../../limits.js';
import type { DocumentStatus, RequestStatus } from '../../signing/states.js';
import type { InstanceStatus } from '../../templates/states.js';
import type { EventFields, EventName } from '../../webhooks/events.js';
import {
  delivery,
  instanceRow,
  reminderAt,
  titleKind,
  type Due,
  type HistoryContext,
  type SeedWorkspace,
  type Signer,
} from './history-parts.js';
import type { Row } from './rows.js';

export type { Due, HistoryContext, SeedBlobs, SeedWorkspace } from './history-parts.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

const FIRST = ['Ada', 'Bruno', 'Chiara', 'Dmitri', 'Emma', 'Farah', 'Goran', 'Hana', 'Ivo', 'Julia', 'Kenji', 'Lena'];
const LAST = ['Berg', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Huber', 'Ivanova', 'Jensen', 'Kowalski'];
const UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const MAIL_TEXT = 'Hello {name},\n\nYou have been asked to review and sign a document.\n\n'.repeat(3);
const MAIL_HTML = `<!doctype html><html><body><p>Hello {name},</p><p>${'You have been asked to review and sign. '.repeat(12)}</p></body></html>`;

/** Writes one document created at `t0` in `ws`; `due` makes it one of the rows a scheduled job finds due now. */
export function seedDocument(ctx: HistoryContext, ws: SeedWorkspace, t0: number, due?: Due): void {
  const { rng, now, out } = ctx;
  const id = rng.id('doc');
  const n = rng.chance(0.5) ? 1 : rng.chance(0.7) ? 2 : 3;
  const sequential = n > 1 && rng.chance(0.2);
  const expiresAt = due === 'expiry' ? now - rng.int(1, 50) * MIN : t0 + DEFAULT_EXPIRY_MS;
  const span = Math.max(MIN, Math.min(expiresAt, now) - t0);
  const at = (f: number) => t0 + Math.floor(span * f);
  const template = due === 'review' || (ws.templates.length > 0 && rng.chance(0.12)) ? rng.pick(ws.templates) : null;
  const reminders = rng.chance(0.3) || due === 'reminder';
  const keyActor = `api_key:${ws.keyId}`;
  const ip = `203.0.113.${rng.int(1, 254)}`;

  // The story's end: documents past their expiry are closed; recent ones mostly still open.
  const closed = expiresAt <= now;
  let status: DocumentStatus;
  let instance: InstanceStatus | null = null;
  if (due === 'expiry' || due === 'reminder') status = 'in_progress';
  else if (due === 'review') status = 'draft';
  else {
    const r = rng.next();
    status = closed
      ? r < 0.78
        ? 'completed'
        : r < 0.84
          ? 'declined'
          : r < 0.88
            ? 'withdrawn'
            : 'expired'
      : r < 0.6
        ? 'in_progress'
        : r < 0.93
          ? 'completed'
          : r < 0.97
            ? 'declined'
            : 'withdrawn';
    if (template && rng.chance(0.25)) {
      if (!closed && t0 > now - REVIEW_WINDOW_MS + HOUR && rng.chance(0.5)) status = 'draft';
      else if (rng.chance(0.2)) status = 'discarded';
    }
  }
  if (template) instance = status === 'draft' ? 'staged' : status === 'discarded' ? 'discarded' : 'confirmed';
  const instanceId = template ? rng.id('tin') : null;
  const stagedT0 = due === 'review' ? now - REVIEW_WINDOW_MS - rng.int(1, 50) * MIN : t0;

  const signers: Signer[] = [];
  for (let slot = 1; slot <= n; slot++) {
    const first = rng.pick(FIRST);
    const last = rng.pick(LAST);
    signers.push({
      id: rng.id('sr'),
      slot,
      role: n === 1 ? 'signer' : `signer_${slot}`,
      email: `${first}.${last}.${rng.hex(6)}@example.com`.toLowerCase(),
      name: `${first} ${last}`,
      status: 'pending',
    });
  }
  const fields: Field[] = signers.map((s, i) => ({
    id: `f${i + 1}`,
    role: s.role,
    type: 'signature',
    page: 1,
    x: 72,
    y: 600 - i * 60,
    width: 180,
    height: 40,
  }));

  // Audit chain and outbox, in time order.
  let seq = 0;
  let prev = GENESIS_HASH;
  const audit = (action: string, actor: string, t: number, extra: AuditExtra = {}) => {
    const base = {
      seq: ++seq,
      at: iso(t),
      action,
      actor,
      signing_request_id: extra.sr ?? null,
      ip: extra.ip ?? null,
      user_agent: extra.ua ?? null,
      detail: extra.detail ?? null,
      prev_hash: prev,
    };
    const hash = entryHash(id, base);
    out.push('audit_events', {
      document_id: id,
      workspace_id: ws.id,
      seq: base.seq,
      action,
      actor,
      signing_request_id: base.signing_request_id,
      ip: base.ip,
      user_agent: base.user_agent,
      detail: base.detail === null ? null : JSON.stringify(base.detail),
      at: t,
      prev_hash: prev,
      hash,
    });
    prev = hash;
  };
  let callbackHook: string | null = null;
  let callbackRow: Row<'hooks'> | null = null;
  if (rng.chance(0.05)) {
    callbackHook = rng.id('hook');
    callbackRow = {
      id: callbackHook,
      workspace_id: ws.id,
      target_url: `https://receiver.example.com/callbacks/${rng.hex(8)}`,
      events: '[]',
      secret: `whsec_${rng.bytes(32).toString('base64url')}`,
      document_id: id,
      source: 'callback',
      created_at: t0,
      deleted_at: null,
    };
  }
  const hooks = callbackHook ? [...ws.hooks, { id: callbackHook, events: [] }] : ws.hooks;
  const emit = <N extends EventName>(name: N, t: number, fields: EventFields<N>) => {
    if (hooks.length === 0) return;
    const eventId = rng.eventId(t);
    const body = JSON.stringify({ event: name, event_id: eventId, created_at: iso(t), workspace_id: ws.id, ...fields });
    out.push('events', { id: eventId, workspace_id: ws.id, name, document_id: id, body, created_at: t });
    for (const h of hooks) if (h.events.length === 0 || h.events.includes(name)) delivery(ctx, ws.id, eventId, h.id, t);
  };
  const mail = (template: string, s: Signer, t: number) =>
    out.push('mail_outbox', {
      id: rng.orderedId('mail', t),
      workspace_id: ws.id,
      document_id: id,
      signing_request_id: s.id,
      template,
      locale: ws.locale,
      to_email: s.email,
      to_name: s.name,
      from_name: ws.name,
      reply_to: null,
      subject: `${ws.name}: please sign`,
      text: MAIL_TEXT.replace('{name}', s.name),
      html: MAIL_HTML.replace('{name}', s.name),
      status: 'sent',
      attempts: 1,
      next_attempt_at: null,
      last_error: null,
      message_id: `<${rng.hex(16)}@signet.local>`,
      created_at: t,
      updated_at: t + 800,
      sent_at: t + 800,
    });

  const title = `${titleKind(rng, now, t0)} ${rng.int(1000, 99999)}`;
  audit('document.created', keyActor, t0, { ip, ua: 'signet-sdk/1.0', detail: { signers: n, placement: 'anchors' } });
  const requests = new Map<string, Record<string, unknown>>();
  const released = (s: Signer, t: number) => {
    requests.set(s.id, { sent_at: t, released_at: t });
    audit('signing_request.sent', keyActor, t, { sr: s.id });
    emit('signing_request.sent', t, {
      signing_request_id: s.id,
      document_id: id,
      signer: { email: s.email, role: s.role, name: s.name, slot: s.slot },
      locale: ws.locale,
      source: template ? 'template_instance' : 'v1_api',
    });
    mail('invitation', s, t);
  };
  const ref = (s: Signer) => ({ email: s.email, name: s.name });

  let closedAt: number | null = null;
  let completedAt: number | null = null;
  if (status !== 'draft' && status !== 'discarded') {
    if (instance === 'confirmed')
      audit('template_instance.confirmed', keyActor, t0, { detail: { instance_id: instanceId } });
    // Times within the span, in order: release, view, sign per signer.
    const times = Array.from({ length: 3 * n + 2 }, () => rng.next()).sort((a, b) => a - b);
    let ti = 0;
    const tick = () => at(times[ti++]!);
    const toSign = status === 'completed' ? n : status === 'in_progress' ? rng.int(0, n - 1) : rng.int(0, n - 1);
    for (const s of signers) if (!sequential || s.slot === 1) released(s, t0);
    for (let i = 0; i < n; i++) {
      const s = signers[i]!;
      const r = requests.get(s.id) ?? {};
      if (sequential && i > 0) {
        if (i > toSign) break; // still queued (or closed while queued)
        const t = tick();
        requests.set(s.id, { sent_at: t, released_at: t });
        audit('signing_request.released', 'system', t, { sr: s.id });
        mail('invitation', s, t);
      }
      if (i < toSign) {
        const tv = tick();
        const tsn = tick();
        Object.assign(requests.get(s.id) ?? r, { viewed_at: tv, signed_at: tsn, view_ip: ip, view_ua: UA });
        s.status = 'signed';
        audit('signing_request.viewed', `signer:${s.email}`, tv, { sr: s.id, ip, ua: UA });
        emit('signing_request.viewed', tv, { signing_request_id: s.id, document_id: id, signer: ref(s) });
        audit('signing_request.signed', `signer:${s.email}`, tsn, { sr: s.id, ip, ua: UA });
        emit('signing_request.signed', tsn, {
          signing_request_id: s.id,
          document_id: id,
          signer: ref(s),
          sha256: ctx.blobs.prepared.sha256,
        });
      } else if (rng.chance(0.5) || status === 'declined') {
        const tv = tick();
        Object.assign(requests.get(s.id) ?? r, { viewed_at: tv, view_ip: ip, view_ua: UA });
        s.status = 'viewed';
        audit('signing_request.viewed', `signer:${s.email}`, tv, { sr: s.id, ip, ua: UA });
        emit('signing_request.viewed', tv, { signing_request_id: s.id, document_id: id, signer: ref(s) });
      }
      if (sequential && i >= toSign) break;
    }
    const end = tick();
    const last = signers[n - 1]!;
    if (status === 'completed') {
      completedAt = end;
      closedAt = end;
      audit('document.all_signed', 'system', end);
      audit('document.completed', 'system', end + 2000);
      emit('document.completed', end + 2000, {
        signing_request_id: last.id,
        document_id: id,
        signer: ref(last),
        signed_pdf_url: `${ctx.baseUrl}/v1/documents/${id}/signed`,
        audit_trail_url: `${ctx.baseUrl}/v1/documents/${id}/audit-trail`,
        sha256: ctx.blobs.signed.sha256,
        cert_serial: '5e11a1',
        tsa_provider: 'local',
        tsa_signed_at: iso(end + 2000),
      });
      for (const s of signers) mail('completed', s, end + 2000);
    } else if (status === 'declined') {
      const d = signers.find((s) => s.status === 'viewed') ?? last;
      d.status = 'declined';
      requests.set(d.id, { ...requests.get(d.id), declined_at: end, decline_reason: 'Terms not agreed' });
      closedAt = end;
      audit('signing_request.declined', `signer:${d.email}`, end, { sr: d.id, ip, ua: UA });
      emit('signing_request.declined', end, {
        signing_request_id: d.id,
        document_id: id,
        signer: ref(d),
        reason: 'Terms not agreed',
      });
      audit('document.declined', 'system', end);
      for (const s of signers) if (s.status !== 'signed' && s !== d) s.status = 'withdrawn';
    } else if (status === 'withdrawn') {
      closedAt = end;
      audit('document.withdrawn', keyActor, end);
      for (const s of signers) if (s.status !== 'signed') s.status = 'withdrawn';
    } else if (status === 'expired') {
      closedAt = expiresAt;
      for (const s of signers) {
        if (s.status === 'signed') continue;
        const wasReleased = requests.has(s.id);
        s.status = 'expired';
        if (!wasReleased) continue; // a queued follower expires silently
        audit('signing_request.expired', 'system', expiresAt, { sr: s.id, detail: { expired_at: iso(expiresAt) } });
        emit('signing_request.expired', expiresAt, {
          signing_request_id: s.id,
          document_id: id,
          signer: ref(s),
          expired_at: iso(expiresAt),
        });
      }
      audit('document.expired', 'system', expiresAt);
    }
  }
  if (instance === 'staged') audit('template_instance.staged', keyActor, stagedT0);
  if (instance === 'discarded') {
    audit('template_instance.staged', keyActor, t0);
    closedAt = at(0.5);
    audit('template_instance.discarded', keyActor, closedAt, {
      detail: { instance_id: instanceId, reason: 'discarded' },
    });
  }

  const createdAt = instance === 'staged' ? stagedT0 : t0;
  out.push('documents', {
    id,
    workspace_id: ws.id,
    title,
    message: rng.chance(0.3) ? 'Please sign by the end of the week.' : null,
    locale: ws.locale,
    status,
    signing_order: sequential ? 'sequential' : 'parallel',
    placement: 'anchors',
    file_name: `${title.toLowerCase().replace(/\W+/g, '-')}.pdf`,
    page_count: 1,
    fields: JSON.stringify(fields),
    original_sha256: ctx.blobs.original.sha256,
    original_blob: ctx.blobs.original.key,
    prepared_sha256: ctx.blobs.prepared.sha256,
    prepared_blob: ctx.blobs.prepared.key,
    signed_blob: completedAt ? ctx.blobs.signed.key : null,
    signed_sha256: completedAt ? ctx.blobs.signed.sha256 : null,
    cert_serial: completedAt ? '5e11a1' : null,
    tsa_provider: completedAt ? 'local' : null,
    tsa_signed_at: completedAt ? iso(completedAt + 2000) : null,
    callback_hook_id: callbackHook,
    created_by_key_id: ws.keyId,
    seal_state: completedAt ? 'done' : 'none',
    seal_attempts: completedAt ? 1 : 0,
    final_request_id: completedAt ? signers[n - 1]!.id : null,
    expires_at: expiresAt,
    created_at: createdAt,
    updated_at: closedAt ?? createdAt,
    completed_at: completedAt ? completedAt + 2000 : null,
    closed_at: closedAt,
    template_id: template?.id ?? null,
    template_version: template?.version ?? null,
    pades_level: completedAt ? 'B-LTA' : null,
    reminder_after_days: reminders ? 3 : null,
    reminder_every_days: reminders ? 3 : null,
  });
  if (callbackRow) {
    // Retired as the prune-events job would have: the events retention after the document ended.
    const endedAt = closedAt ?? (completedAt ? completedAt + 2000 : null);
    const retiredAt = endedAt === null ? null : endedAt + RETENTION_DEFAULTS.eventsMs;
    out.push('hooks', { ...callbackRow, deleted_at: retiredAt !== null && retiredAt < ctx.now ? retiredAt : null });
  }
  if (template && instance && instanceId)
    instanceRow(ctx, ws, template, { id: instanceId, status: instance }, id, signers, createdAt, closedAt);
  if (status === 'draft' || status === 'discarded') return;
  for (const s of signers) {
    const r = requests.get(s.id);
    const open = s.status === 'pending' || s.status === 'viewed';
    const status: RequestStatus = r === undefined && s.status === 'pending' ? 'queued' : s.status;
    const tk = rng.bytes(32).toString('base64url');
    if (open && status !== 'queued') ctx.keepToken(id, s.id, tk);
    const warned = open && expiresAt - now < EXPIRY_WARNING_MS ? expiresAt - EXPIRY_WARNING_MS : null;
    out.push('signing_requests', {
      id: s.id,
      document_id: id,
      workspace_id: ws.id,
      slot: s.slot,
      role: s.role,
      email: s.email,
      name: s.name,
      status,
      token_hash: sha256Hex(tk),
      expires_at: expiresAt,
      sent_at: (r?.sent_at as number | undefined) ?? null,
      released_at: (r?.released_at as number | undefined) ?? null,
      viewed_at: (r?.viewed_at as number | undefined) ?? null,
      signed_at: (r?.signed_at as number | undefined) ?? null,
      declined_at: (r?.declined_at as number | undefined) ?? null,
      decline_reason: (r?.decline_reason as string | undefined) ?? null,
      closed_at: open || status === 'queued' ? null : ((r?.signed_at as number | undefined) ?? closedAt),
      signature_kind: s.status === 'signed' ? 'typed' : null,
      signature_text: s.status === 'signed' ? s.name : null,
      view_ip: (r?.view_ip as string | undefined) ?? null,
      view_ua: (r?.view_ua as string | undefined) ?? null,
      sign_ip: s.status === 'signed' ? ip : null,
      sign_ua: s.status === 'signed' ? UA : null,
      reminded_at: null,
      created_at: t0,
      updated_at: closedAt ?? t0,
      next_reminder_at: reminders && open ? reminderAt(rng, now, expiresAt, due) : null,
      reminders_sent: reminders ? (open ? rng.int(0, 2) : 0) : null,
      expiry_warned_at: due === 'expiry' ? null : warned,
    });
  }
}

type AuditExtra = { sr?: string; ip?: string; ua?: string; detail?: Record<string, unknown> };
