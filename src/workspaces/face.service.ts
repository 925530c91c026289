// A workspace's face as operators change it, from `signet workspace update` or the dashboard's Settings page: display
// name, Reply-To, accent colour and logo. Guarantees:
// - Every value is checked before anything is written (brand-rules.ts for colour and logo, lib/email.ts for the
//   address); a refusal writes nothing and says why, in a reason the CLI prints and a code the dashboard words.
// - All changes of one call, their audit-log rows (one per change) and the new logo blob commit in one transaction,
//   or none of them does (a file blob written for it is removed on rollback, documents/blob-store.ts).
// - A replaced or removed logo's blob is queued for deletion in that transaction and deleted after the commit; a
//   deletion that fails stays queued for the purge job's drain, like a purged document's blobs.
import type { Db } from '../db/db.js';
import { migrationApplied } from '../db/migrate.js';
import { recordAudit } from '../audit/audit-log.repo.js';
import type { BlobStore } from '../documents/blob-store.js';
import { queueBlobDeletions } from '../documents/blob-deletions.repo.js';
import { drainBlobDeletions } from '../documents/blob-deletions.js';
import type { Clock } from '../lib/clock.js';
import { isEmailAddress } from '../lib/email.js';
import { sha256Hex } from '../lib/crypto.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { WORKSPACE_NAME_MAX } from '../limits.js';
import { checkBrandColor, checkLogo, type Logo } from './brand-rules.js';
import { brandOf } from './brand.js';
import {
  findWorkspace,
  findWorkspaceForUpdate,
  setWorkspaceBrandColor,
  setWorkspaceLogo,
  setWorkspaceName,
  setWorkspaceReplyTo,
} from './workspaces.repo.js';

export type FaceDeps = { db: Db; clock: Clock; blobs: BlobStore; logger?: Logger };

/** What to change; an absent field stays as it is, null clears it (not the name, which every workspace has). */
export type FaceChanges = {
  name?: string;
  replyTo?: string | null;
  brandColor?: string | null;
  /** The logo file's bytes; null removes the logo. */
  logo?: Uint8Array | null;
};

export type FaceField = 'name' | 'reply_to' | 'brand_color' | 'logo';
export type FaceProblem =
  | 'name'
  | 'reply_to'
  | 'color_format'
  | 'color_contrast'
  | 'logo_type'
  | 'logo_size'
  | 'logo_dimensions'
  | 'logo_damaged'
  | 'unavailable';
/** A refusal: the field it belongs to (none: the whole form), a code, an English reason and the reason's values. */
export type FaceRefusal = {
  ok: false;
  field: FaceField | null;
  problem: FaceProblem;
  reason: string;
  vars: Record<string, string | number>;
};

const CONTROL = /[\u0000-\u001f\u007f]/;

type Checked = { name?: string; replyTo?: string | null; brandColor?: string | null; logo?: Logo | null };

/** Every given value checked and normalized, or the first refusal (in the order name, reply-to, colour, logo). */
export function checkFaceChanges(c: FaceChanges): { ok: true; checked: Checked } | FaceRefusal {
  const checked: Checked = {};
  if (c.name !== undefined) {
    const name = c.name.trim();
    if (!name || name.length > WORKSPACE_NAME_MAX || CONTROL.test(name))
      return {
        ok: false,
        field: 'name',
        problem: 'name',
        reason: `The name must be 1 to ${WORKSPACE_NAME_MAX} characters on one line.`,
        vars: { max: WORKSPACE_NAME_MAX },
      };
    checked.name = name;
  }
  if (c.replyTo !== undefined) {
    const to = c.replyTo?.trim() || null;
    if (to !== null && !isEmailAddress(to))
      return {
        ok: false,
        field: 'reply_to',
        problem: 'reply_to',
        reason: `The reply-to address "${to.slice(0, 80)}" is not a plain e-mail address like name@example.com.`,
        vars: { value: to.slice(0, 80) },
      };
    checked.replyTo = to;
  }
  if (c.brandColor !== undefined) {
    if (c.brandColor === null || c.brandColor.trim() === '') checked.brandColor = null;
    else {
      const r = checkBrandColor(c.brandColor);
      if (!r.ok)
        return {
          ok: false,
          field: 'brand_color',
          problem: r.problem === 'format' ? 'color_format' : 'color_contrast',
          reason: r.reason,
          vars: r.vars,
        };
      checked.brandColor = r.color;
    }
  }
  if (c.logo !== undefined) {
    if (c.logo === null) checked.logo = null;
    else {
      const r = checkLogo(c.logo);
      if (!r.ok) return { ok: false, field: 'logo', problem: `logo_${r.problem}`, reason: r.reason, vars: r.vars };
      checked.logo = r.logo;
    }
  }
  return { ok: true, checked };
}

/**
 * Applies `changes` to the workspace (see the guarantees above); `actor` as in the audit log. Returns what changed
 * (the audit actions written) or the first refusal. An unknown workspace is a programming error (callers check).
 */
export async function updateWorkspaceFace(
  deps: FaceDeps,
  o: { workspaceId: string; actor: string; changes: FaceChanges },
): Promise<{ ok: true; actions: string[] } | FaceRefusal> {
  const r = checkFaceChanges(o.changes);
  if (!r.ok) return r;
  const c = r.checked;
  if (!(await migrationApplied(deps.db, '022-workspace-face')))
    return {
      ok: false,
      field: null,
      problem: 'unavailable',
      reason: 'These settings need migration 022-workspace-face; run signet migrate first.',
      vars: {},
    };
  const now = deps.clock.now();
  const actions: string[] = [];
  const replaced: string[] = [];
  await deps.db.kysely.transaction().execute(async (trx) => {
    const row = await findWorkspaceForUpdate(deps.db, trx, o.workspaceId);
    if (!row) throw new Error(`no workspace ${o.workspaceId}`);
    const audit = (action: string, detail: unknown) => {
      actions.push(action);
      return recordAudit(trx, { workspaceId: o.workspaceId, actor: o.actor, action, detail }, now);
    };
    if (c.name !== undefined) {
      await setWorkspaceName(trx, o.workspaceId, c.name);
      await audit('workspace.name_set', { name: c.name, previous: row.name });
    }
    if (c.replyTo !== undefined) {
      await setWorkspaceReplyTo(trx, o.workspaceId, c.replyTo);
      await audit('workspace.reply_to_set', { reply_to: c.replyTo });
    }
    if (c.brandColor !== undefined) {
      await setWorkspaceBrandColor(trx, o.workspaceId, c.brandColor);
      await audit('workspace.brand_color_set', { brand_color: c.brandColor });
    }
    if (c.logo !== undefined) {
      const old = row.logo_blob ?? null;
      if (c.logo) {
        const blob = await deps.blobs.put(c.logo.bytes, 'logo', trx);
        await setWorkspaceLogo(trx, o.workspaceId, { blob, type: c.logo.type });
        const { type, width, height } = c.logo;
        const detail = { type, width, height, bytes: c.logo.bytes.byteLength, sha256: sha256Hex(c.logo.bytes) };
        await audit('workspace.logo_set', detail);
      } else {
        await setWorkspaceLogo(trx, o.workspaceId, null);
        await audit('workspace.logo_removed', old ? {} : { had_logo: false });
      }
      if (old) replaced.push(old);
      await queueBlobDeletions(trx, replaced, now);
    }
  });
  if (replaced.length)
    await drainBlobDeletions(deps.db, deps.clock, deps.blobs, { keys: replaced, logger: deps.logger }).catch(
      (err: unknown) =>
        (deps.logger ?? silentLogger).error({ err: String(err) }, 'deleting a replaced logo failed; retried later'),
    );
  return { ok: true, actions };
}

/** A workspace's face and other settings as `signet workspace update --json` prints them. */
export async function workspaceSettings(db: Db, workspaceId: string, baseUrl: string) {
  const row = await findWorkspace(db.kysely, workspaceId);
  if (!row) return null;
  const brand = brandOf(row);
  return {
    workspace_id: row.id,
    name: row.name,
    reply_to: row.reply_to,
    brand_color: brand.color,
    logo: brand.logo ? { url: `${baseUrl.replace(/\/+$/, '')}${brand.logo.path}`, type: brand.logo.type } : null,
    region: brand.region,
    retention_days: row.retention_days == null ? null : Number(row.retention_days),
    default_locale: row.default_locale ?? null,
  };
}
