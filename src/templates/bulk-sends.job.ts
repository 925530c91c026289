// Sending a bulk send, as a lease-claim job (jobs/runner.ts): the send is the leased item, its rows are sent one at
// a time, a slice of rows per claim (then the claim is let go, so other sends get their turn and stop() never waits
// long). Guarantees:
// - each row's instance is created in one transaction with the row's outcome and the send's counter
//   (instances.ts `within`), guarded by the lease and by the row still being pending: a row whose outcome is
//   recorded is never sent again, a worker that lost its lease writes nothing, and a worker killed mid-row leaves
//   no instance behind (its transaction never committed); the claim lapses and any worker goes on;
// - a row instantiate refuses (4xx, or render_failed) is recorded failed with its problems; any other error leaves
//   the row pending and the claim to lapse (retried), at most MAX_ROW_ATTEMPTS tries a row;
// - before each row the monthly cap is checked: a send that would pass it stops, every row left recorded failed
//   (tier_required) in one transaction, and the send ends `failed`; no row is ever half sent.
import { createRunner, type Runner } from '../jobs/runner.js';
import { ApiError } from '../lib/errors.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';
import { migrationGate } from '../http/feature-gate.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { checkMonthlyCap } from '../signing/open.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import { instantiate } from './instances.js';
import type { TemplatesDeps } from './templates.service.js';
import { capProblem, problemsOf } from './bulk-sends.service.js';
import type { BulkRowIn } from './bulk-sends.schemas.js';
import {
  beginRowAttempt,
  claimBulkSends,
  finishBulkSend,
  findBulkSendById,
  LostClaim,
  nextPendingRow,
  pendingRows,
  recordRows,
  releaseBulkSend,
  type BulkRowRow,
  type BulkSendRow,
  type RowOutcome,
} from './bulk-sends.repo.js';

const LEASE_MS = 90_000;
/** The longest one claim's work may take: a slice, and the row in hand when it ends. */
const TIMEOUT_MS = 60_000;
/** A slice ends after this many rows or this long, whichever comes first. */
const SLICE_ROWS = 25;
const SLICE_MS = 15_000;
export const MAX_ROW_ATTEMPTS = 3;

export type BulkSendJobDeps = TemplatesDeps & {
  workerId: string;
  logger?: Logger;
  /** Fault tests only: runs inside each row's transaction after its outcome is written; a throw rolls it back. */
  beforeCommit?: (row: number) => void;
};

type Item = { id: string; claimExpiresAt: number };

/**
 * The uploader as the instances' audit trails name it: their key, workspace (its plan and default language today)
 * and address.
 */
async function uploaderOf(deps: BulkSendJobDeps, send: BulkSendRow): Promise<AuthContext | null> {
  const ws = await findWorkspace(deps.db.kysely, send.workspace_id);
  if (!ws) return null;
  return {
    keyId: send.created_by_key_id,
    ...(send.created_by ? { actor: send.created_by } : {}),
    workspace: { id: ws.id, name: ws.name, slug: ws.slug, tier: ws.tier, defaultLocale: ws.default_locale ?? null },
    allowedOrigins: [],
  };
}

async function record(deps: BulkSendJobDeps, id: string, rows: number[], outcome: RowOutcome): Promise<void> {
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute((trx) => recordRows(trx, id, deps.workerId, rows, outcome, now));
}

/** The cap reached: every row left failed, the send `failed`. */
async function stopAtCap(deps: BulkSendJobDeps, send: BulkSendRow, auth: AuthContext, err: ApiError): Promise<void> {
  const problem = capProblem(String(err.meta?.tier ?? auth.workspace.tier), Number(err.meta?.cap));
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute(async (trx) => {
    const rows = await pendingRows(trx, send.id);
    await recordRows(trx, send.id, deps.workerId, rows, { status: 'failed', problems: [problem] }, now);
    if (!(await finishBulkSend(trx, send.id, deps.workerId, 'failed', now))) throw new LostClaim();
  });
}

const isCap = (err: unknown): err is ApiError =>
  err instanceof ApiError && err.name_ === 'tier_required' && err.meta?.cap !== undefined;

/** One row: its instance and its outcome in one transaction. */
async function sendRow(deps: BulkSendJobDeps, send: BulkSendRow, auth: AuthContext, meta: ClientMeta, row: BulkRowRow) {
  const input = JSON.parse(row.input!) as BulkRowIn;
  await instantiate(deps, auth, send.template_id, { ...input, version: send.template_version }, meta, {
    within: async (tx, instanceId) => {
      await recordRows(tx.trx, send.id, deps.workerId, [row.row], { status: 'sent', instanceId }, tx.now);
      deps.beforeCommit?.(row.row);
    },
  });
}

/** Works one claimed send for a slice of rows; true when rows were done or the send ended. */
async function workSlice(deps: BulkSendJobDeps, id: string): Promise<boolean> {
  const send = await findBulkSendById(deps.db.kysely, id);
  if (!send || send.claimed_by !== deps.workerId || (send.status !== 'queued' && send.status !== 'running'))
    return false;
  const auth = await uploaderOf(deps, send);
  const meta = JSON.parse(send.client_meta) as ClientMeta;
  const started = deps.clock.now();
  for (let done = 0; done < SLICE_ROWS && deps.clock.now() - started < SLICE_MS; done++) {
    const next = await nextPendingRow(deps.db.kysely, id);
    if (!next) {
      await finishBulkSend(deps.db.kysely, id, deps.workerId, 'completed', deps.clock.now());
      return true;
    }
    if (!auth) {
      const gone = { code: 'not_found', message: 'The workspace no longer exists.' };
      await record(deps, id, [next.row], { status: 'failed', problems: [gone] });
      continue;
    }
    try {
      await checkMonthlyCap(deps, auth, deps.clock.now());
    } catch (err) {
      if (!isCap(err)) throw err;
      await stopAtCap(deps, send, auth, err);
      return true;
    }
    const attempts = await beginRowAttempt(deps.db.kysely, id, next.row, deps.clock.now());
    if (attempts === null) continue;
    if (attempts > MAX_ROW_ATTEMPTS) {
      const broke = { code: 'internal_error', message: `The row could not be sent in ${MAX_ROW_ATTEMPTS} tries.` };
      await record(deps, id, [next.row], { status: 'failed', problems: [broke] });
      continue;
    }
    try {
      await sendRow(deps, send, auth, meta, next);
    } catch (err) {
      if (err instanceof LostClaim) return false;
      if (isCap(err)) {
        await stopAtCap(deps, send, auth, err);
        return true;
      }
      if (!(err instanceof ApiError) || (err.status >= 500 && err.name_ !== 'render_failed')) throw err;
      await record(deps, id, [next.row], { status: 'failed', problems: problemsOf(err) });
    }
  }
  await releaseBulkSend(deps.db, id, deps.workerId);
  return true;
}

/** The job as the runner works it (exported for fault tests, which build runners with their own worker ids). */
export function bulkSendJob(deps: BulkSendJobDeps) {
  const logger = deps.logger ?? silentLogger;
  const gate = migrationGate(deps.db, '014-bulk-sends');
  return {
    claim: async (o: { now: number; workerId: string; leaseMs: number; limit: number }): Promise<Item[]> => {
      // A deployment whose database predates bulk sends has nothing to send (and no table to ask).
      if (!(await gate.available())) return [];
      return (await claimBulkSends(deps.db, o)).map((s) => ({ id: s.id, claimExpiresAt: s.claim_expires_at! }));
    },
    async work({ id }: Item): Promise<boolean> {
      try {
        return await workSlice(deps, id);
      } catch (err) {
        if (err instanceof LostClaim) return false;
        // The row stays pending and the claim lapses: any worker tries the row again.
        logger.error({ err: describeError(err), bulk_send_id: id }, 'bulk send: a row broke off; it is retried');
        return false;
      }
    },
    release: async ({ id }: Item) => void (await releaseBulkSend(deps.db, id, deps.workerId)),
  };
}

/** The bulk-send runner: one send at a time, its rows in order. */
export const createBulkSendRunner = (deps: BulkSendJobDeps): Runner =>
  createRunner(bulkSendJob(deps), {
    name: 'bulk-sends',
    clock: deps.clock,
    workerId: deps.workerId,
    logger: deps.logger,
    leaseMs: LEASE_MS,
    timeoutMs: TIMEOUT_MS,
    batchSize: 1,
    concurrency: 1,
    pollIntervalMs: 1000,
  });

export const BULK_LEASE_MS = LEASE_MS;
