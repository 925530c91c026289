// What the dashboard's pages show and do, scoped to the signed-in person's workspace: anything of another workspace
// is "not found" (an id typed into the URL reveals nothing), and members may look but not manage. The checks here are
// the second line: roles.ts's table already refused anyone below a route's role before its handler ran.
import { ApiError, apiError } from '../lib/errors.js';
import { findKey, listKeys, type ApiKey } from '../keys/keys.repo.js';
import { presentKey } from '../keys/presenters.js';
import { listKeyUses } from '../keys/key-uses.repo.js';
import {
  createKeyAs,
  parseIpList,
  parseOriginList,
  revokeKeyAs,
  setKeyIpsAs,
  setKeyOriginsAs,
} from '../keys/keys.service.js';
import { monthStart } from '../signing/open.js';
import { countDocumentsSince, failingSeals } from '../signing/signing.repo.js';
import { iso } from '../lib/clock.js';
import { listDeliveries } from '../webhooks/hooks.service.js';
import { listMembers } from './people.repo.js';
import { findHook, listHooks } from '../webhooks/hooks.repo.js';
import type { HooksService } from '../webhooks/hooks.service.js';
import type { SigningDeps } from '../signing/signing.service.js';
import { presentHook } from '../webhooks/presenters.js';
import { listAudit } from '../audit/audit-log.repo.js';
import { actorOf, NotAllowed, type Viewer } from './people.service.js';
import { allows } from './roles.js';

/** The signing deps (app.ts registers the dashboard with them) and the webhooks service. */
export type DashboardDeps = SigningDeps & { hooks: HooksService };

/** Owners and admins manage keys, hooks and people; members only look. */
export const canManage = (v: Viewer): boolean => allows(v.role, 'admin');

export function requireManager(v: Viewer): void {
  if (!canManage(v)) throw new NotAllowed('error.managersOnly');
}

/** The plan and its use this month, and what needs attention: deliveries given up, seals failing. */
export async function overview(deps: DashboardDeps, v: Viewer) {
  const now = deps.clock.now();
  const [used, keys, givenUp, seals] = await Promise.all([
    countDocumentsSince(deps.db.kysely, v.workspace.id, monthStart(now)),
    listKeys(deps.db.kysely, v.workspace.id),
    listDeliveries(deps.db, { workspaceId: v.workspace.id, statuses: ['giving_up'], limit: 5 }),
    failingSeals(deps.db.kysely, v.workspace.id, 5),
  ]);
  return {
    tier: v.workspace.tier,
    used,
    cap: deps.config.tierCaps[v.workspace.tier] ?? null,
    activeKeys: keys.filter((k) => k.revoked_at === null).length,
    givenUp,
    seals: seals.map((d) => ({ ...d, updated_at: iso(d.updated_at) })),
  };
}

export const AUDIT_PAGE_SIZE = 50;

/** The workspace's audit log, newest first; `before` is the last row id of the previous page. */
export async function auditLog(deps: DashboardDeps, v: Viewer, before: string | undefined) {
  const beforeId = before && /^[0-9]{1,15}$/.test(before) ? Number(before) : undefined;
  const rows = await listAudit(deps.db.kysely, v.workspace.id, { beforeId, limit: AUDIT_PAGE_SIZE + 1 });
  const entries = rows.slice(0, AUDIT_PAGE_SIZE).map((r) => ({
    id: Number(r.id),
    at: iso(Number(r.created_at)),
    actor: r.actor,
    action: r.action,
    target: r.target_id,
    detail: r.detail,
  }));
  return { entries, next: rows.length > AUDIT_PAGE_SIZE ? entries.at(-1)!.id : null };
}

export const people = async (deps: DashboardDeps, v: Viewer) =>
  (await listMembers(deps.db.kysely, v.workspace.id)).map((m) => ({
    email: m.email,
    role: m.role,
    since: iso(Number(m.created_at)),
    active: m.password_hash !== null,
  }));

export const workspaceKeys = async (deps: DashboardDeps, v: Viewer) =>
  (await listKeys(deps.db.kysely, v.workspace.id)).map(presentKey).reverse();

/** The key with this id in the viewer's workspace; 404 for anything else. */
export async function workspaceKey(deps: DashboardDeps, v: Viewer, id: string): Promise<ApiKey> {
  const k = await findKey(deps.db.kysely, id);
  if (!k || k.workspace_id !== v.workspace.id) throw apiError('not_found');
  return k;
}

export async function createKey(deps: DashboardDeps, v: Viewer) {
  requireManager(v);
  return createKeyAs(
    deps.db.kysely,
    { workspaceId: v.workspace.id, legacy: false, actor: actorOf(v) },
    deps.clock.now(),
  );
}

export async function revokeKey(deps: DashboardDeps, v: Viewer, id: string): Promise<void> {
  requireManager(v);
  const k = await workspaceKey(deps, v, id);
  await revokeKeyAs(deps.db.kysely, k, actorOf(v), deps.clock.now());
}

export const KEY_USE_PAGE_SIZE = 50;

/**
 * One page of a key's use (one row per /v1 request), newest first. `before` is the previous page's last row as
 * "<at>.<id>"; anything else starts at the newest.
 */
export async function keyUses(deps: DashboardDeps, v: Viewer, keyId: string, before: string | undefined) {
  const m = before ? /^([0-9]{1,15})\.([0-9]{1,15})$/.exec(before) : null;
  const rows = await listKeyUses(deps.db.kysely, {
    workspaceId: v.workspace.id,
    keyId,
    before: m ? { at: Number(m[1]), id: Number(m[2]) } : undefined,
    limit: KEY_USE_PAGE_SIZE + 1,
  });
  const page = rows.slice(0, KEY_USE_PAGE_SIZE);
  const last = page.at(-1);
  return {
    uses: page.map((r) => ({ at: iso(r.at), ip: r.ip_masked, method: r.method, route: r.route, status: r.status })),
    next: rows.length > KEY_USE_PAGE_SIZE && last ? `${last.at}.${last.id}` : null,
  };
}

/** Lines of a textarea: trimmed, blank lines dropped. */
const lines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** Saves the list, or says why it was refused (the CLI's own message) and saves nothing. */
export async function setKeyList(
  deps: DashboardDeps,
  v: Viewer,
  id: string,
  which: 'ips' | 'origins',
  text: string,
): Promise<{ ok: true } | { ok: false; message: string }> {
  requireManager(v);
  const k = await workspaceKey(deps, v, id);
  if (k.revoked_at !== null) throw apiError('not_found');
  const parsed = which === 'ips' ? parseIpList(lines(text)) : parseOriginList(lines(text));
  if (!parsed.ok) return parsed;
  const now = deps.clock.now();
  if (which === 'ips') await setKeyIpsAs(deps.db.kysely, k, parsed.list, actorOf(v), now);
  else await setKeyOriginsAs(deps.db.kysely, k, parsed.list, actorOf(v), now);
  return { ok: true };
}

// ── Webhooks ────────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Developers → Webhooks lists the workspace-wide hooks only: a document's `callback_url` hook is shown on that
 * document's page, since a busy workspace has one for every document sent in the last weeks.
 */
export const workspaceHooks = async (deps: DashboardDeps, v: Viewer) =>
  (await listHooks(deps.db.kysely, v.workspace.id, { workspaceWide: true })).map(presentHook);

/** The live hook with this id in the viewer's workspace; 404 for anything else. */
export async function workspaceHook(deps: DashboardDeps, v: Viewer, id: string) {
  const h = await findHook(deps.db.kysely, v.workspace.id, id);
  if (!h) throw apiError('not_found');
  return presentHook(h);
}

/** Creates a workspace hook (the secret is in the result only), or says why not with the API's own message. */
export async function createHook(deps: DashboardDeps, v: Viewer, targetUrl: string, events: string[]) {
  requireManager(v);
  try {
    const hook = await deps.hooks.create(v.workspace.id, { target_url: targetUrl, events }, actorOf(v));
    return { ok: true as const, hook };
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return { ok: false as const, message: err.message };
    throw err;
  }
}

export async function deleteHook(deps: DashboardDeps, v: Viewer, id: string): Promise<void> {
  requireManager(v);
  const h = await workspaceHook(deps, v, id);
  await deps.hooks.remove(v.workspace.id, h.id, actorOf(v));
}

export async function sendTest(deps: DashboardDeps, v: Viewer, id: string): Promise<void> {
  requireManager(v);
  if (!(await deps.hooks.sendTest(v.workspace.id, id, actorOf(v)))) throw apiError('not_found');
}

export async function replay(deps: DashboardDeps, v: Viewer, hookId: string, deliveryId: string): Promise<void> {
  requireManager(v);
  if (!(await deps.hooks.replay(v.workspace.id, hookId, deliveryId, actorOf(v)))) throw apiError('not_found');
}

/** One page of a hook's deliveries; a bad filter or cursor is treated as none rather than failing the page. */
export async function hookDeliveries(
  deps: DashboardDeps,
  v: Viewer,
  id: string,
  q: { status?: string; before?: string },
) {
  const query = { status: q.status || undefined, before: q.before || undefined, limit: 25 };
  const page = await deps.hooks.deliveries(v.workspace.id, id, query).catch((err) => {
    if (err instanceof ApiError && err.status === 400) return deps.hooks.deliveries(v.workspace.id, id, { limit: 25 });
    throw err;
  });
  if (!page) throw apiError('not_found');
  return page;
}
