// The seeder (issue 25): a few years of realistic history written straight into the tables, in big transactions
// of multi-row statements (seed.repo.ts), for the size benchmarks and the query-plan test. Guarantees:
// - what it writes the app reads as its own: prefixed ids, statuses from the typed tables, hashed keys and link
//   tokens, audit chains made with the app's entryHash, outbox events, deliveries and attempts as the dispatcher
//   leaves them;
// - deterministic: one seed gives the same rows (ids, tokens and key plaintexts included), so runs compare;
// - a fixed number of rows is due for each scheduled job at `now`, whatever the size, so a job's run compares;
// - blobs: three real PDFs shared by every document (a million files would measure the disk, not Signet); the
//   "signed" one is a plain PDF standing in for a sealed file: downloads work, verifying it would not.
import type { Db } from '../../db/db.js';
import { createDbBlobStore, type BlobStore } from '../../documents/blob-store.js';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { hashKey, CURRENT_PREFIX, LEGACY_PREFIX } from '../../keys/keys.repo.js';
import { sha256Hex } from '../../lib/crypto.js';
import { KEY_USE_RETENTION_MS } from '../../limits.js';
import { seedDocument, type Due, type SeedBlobs, type SeedWorkspace } from './history.js';
import { createRng, type Rng } from './prng.js';
import { RowBuffer, type BufferedTable } from './rows.js';
import { analyze, bulkWriter, deferIndexes, fastWrites, sampleDocuments } from './seed.repo.js';

const DAY = 86_400_000;
const YEARS = 3;
/** Rows per transaction: big enough to amortise commits, small enough to keep memory flat. */
const ROWS_PER_TRANSACTION = 60_000;
/** Documents made between two turns of the event loop, so a transaction in flight keeps the database busy. */
const YIELD_EVERY = 50;
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

export type SeedOptions = {
  documents: number;
  /** Workspaces (default 5); the first holds about 80% of the documents. */
  workspaces?: number;
  seed?: number;
  /** The end of the history (ms); default 2026-11-22T10:00Z, the harness's start. */
  now?: number;
  /** Where the shared PDFs go; default: database rows on PostgreSQL. On SQLite pass the app's file store. */
  blobs?: BlobStore;
  /** Base URL written into events (`signed_pdf_url`); default http://127.0.0.1. */
  baseUrl?: string;
  /** Called after each transaction with the documents written so far. */
  progress?: (documents: number) => void;
};

export type SeedKey = { workspaceId: string; keyId: string; plaintext: string; legacy: boolean };
export type SeedSummary = {
  now: number;
  ms: number;
  /** Rows written per table by the seeder. */
  rows: Partial<Record<BufferedTable, number>>;
  /** The dominant workspace first. */
  workspaces: { id: string; slug: string; tier: string; documents: number }[];
  /** One working key per workspace (and the dominant one's legacy key). */
  keys: SeedKey[];
  /** A dashboard owner per workspace (no password: benches and tests mint sessions). */
  users: { userId: string; workspaceId: string; email: string }[];
  /** Link tokens of open requests in the dominant workspace (up to 50), for signer pages. */
  signerTokens: { documentId: string; requestId: string; token: string }[];
  /** Seeded documents of the dominant workspace to read back: a completed one and an open one. */
  sample: { completed: string | null; open: string | null };
  templates: { workspaceId: string; templateId: string; version: number }[];
  /** Rows made due now per scheduled job (fixed counts). */
  due: Record<Due | 'prune-key-uses', number>;
};

const DEFAULT_NOW = Date.parse('2026-11-22T10:00:00.000Z');
const DUE: Record<Due, number> = { expiry: 20, reminder: 20, review: 5 };
const PRUNE_DUE = 500;
const TIERS = ['enterprise', 'business', 'starter', 'enterprise', 'business'];
const LOCALES = ['en', 'de', 'fr', 'en', 'es'];

export async function seedHistory(db: Db, opts: SeedOptions): Promise<SeedSummary> {
  const started = performance.now();
  const now = opts.now ?? DEFAULT_NOW;
  const rng = createRng(opts.seed ?? 25);
  const nWs = Math.max(1, opts.workspaces ?? 5);
  const writer = await bulkWriter(db);
  const settings = await fastWrites(db);
  const indexing = await deferIndexes(db);
  const out = new RowBuffer();
  // One transaction in flight while the next one's rows are made: on PostgreSQL the server's inserts then overlap
  // the generator's CPU (the loops below yield to I/O now and then). Transactions still commit one after another,
  // in order; `settled` waits for the last and throws its error.
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async (relaxed = true) => {
    await inFlight;
    const batches = out.drain();
    inFlight = db.kysely.transaction().execute(async (trx) => {
      await writer.begin(trx, relaxed);
      for (const b of batches) await writer.insert(trx, b);
    });
    inFlight.catch(() => undefined); // observed by the next flush or `settled`
  };
  const settled = () => inFlight;
  try {
    const blobs = await putBlobs(opts.blobs ?? createDbBlobStore(db, { now: () => now }));
    const setup = seedWorkspaces(out, rng, nWs, now, blobs);
    // Keys and hooks with their triggers (the change notices other instances' caches listen to).
    await flush(false);
    await settled();
    const sizes = split(opts.documents, nWs);
    const summary: SeedSummary = {
      now,
      ms: 0,
      rows: {},
      workspaces: setup.workspaces.map((w, i) => ({ id: w.id, slug: w.slug, tier: w.tier, documents: sizes[i]! })),
      keys: setup.keys,
      users: setup.users,
      signerTokens: [],
      sample: { completed: null, open: null },
      templates: setup.templates,
      due: { ...DUE, 'prune-key-uses': PRUNE_DUE },
    };
    let currentWs = 0;
    const ctx = {
      rng,
      now,
      blobs,
      out,
      baseUrl: opts.baseUrl ?? 'http://127.0.0.1',
      keepToken(documentId: string, requestId: string, token: string) {
        if (currentWs === 0 && summary.signerTokens.length < 50)
          summary.signerTokens.push({ documentId, requestId, token });
      },
    };
    let written = 0;
    // Documents in time order per workspace; the due sets are the dominant workspace's, at the end of its history.
    const span = YEARS * 365 * DAY;
    for (let w = 0; w < nWs; w++) {
      currentWs = w;
      const ws = setup.seedWs[w]!;
      const n = sizes[w]!;
      const dueList: Due[] = w === 0 ? (Object.keys(DUE) as Due[]).flatMap((d) => Array<Due>(DUE[d]).fill(d)) : [];
      const plain = Math.max(0, n - dueList.length);
      for (let i = 0; i < plain; i++) {
        // Growth: later years hold more documents (sqrt spacing puts more of them near `now`).
        const t0 = now - span + Math.floor(span * Math.sqrt((i + rng.next()) / plain));
        seedDocument(ctx, ws, Math.min(t0, now - 60_000));
        written++;
        if (out.size >= ROWS_PER_TRANSACTION) {
          await flush();
          opts.progress?.(written);
        } else if (i % YIELD_EVERY === 0) await yieldToIo();
      }
      for (const d of dueList.slice(0, n)) {
        const back = d === 'review' ? 15 * DAY : rng.int(2, 20) * DAY;
        seedDocument(ctx, ws, now - back, d);
        written++;
      }
      await flush();
      opts.progress?.(written);
    }
    await seedKeyUses(out, flush, rng, setup.keys, opts.documents, now);
    await settled();
    await indexing.restore();
    summary.rows = Object.fromEntries(out.counts);
    summary.sample = await sampleDocuments(db.kysely, setup.workspaces[0]!.id);
    await analyze(db);
    summary.ms = Math.round(performance.now() - started);
    return summary;
  } finally {
    await inFlight.catch(() => undefined);
    await indexing.restore();
    await settings.restore();
  }
}

/** About 80% to the first workspace, the rest spread evenly. */
function split(total: number, n: number): number[] {
  if (n === 1) return [total];
  const first = Math.round(total * 0.8);
  const rest = total - first;
  return [first, ...Array.from({ length: n - 1 }, (_, i) => Math.floor(rest / (n - 1)) + (i < rest % (n - 1) ? 1 : 0))];
}

async function putBlobs(store: BlobStore): Promise<SeedBlobs> {
  const put = async (bytes: Uint8Array, kind: string) => ({
    key: await store.put(bytes, kind),
    sha256: sha256Hex(bytes),
  });
  return {
    original: await put(await makePdf({ text: [['Agreement', 'Signed by the parties below']] }), 'original'),
    prepared: await put(await makePdf({ text: [['Agreement', 'Sign here']] }), 'prepared'),
    signed: await put(await makePdf({ text: [['Agreement', 'Sealed']] }), 'signed'),
  };
}

function seedWorkspaces(out: RowBuffer, rng: Rng, n: number, now: number, blobs: SeedBlobs) {
  const workspaces: { id: string; slug: string; tier: string }[] = [];
  const seedWs: SeedWorkspace[] = [];
  const keys: SeedKey[] = [];
  const users: SeedSummary['users'] = [];
  const templates: SeedSummary['templates'] = [];
  const born = now - YEARS * 365 * DAY - DAY;
  for (let w = 0; w < n; w++) {
    const id = rng.id('ws');
    const name = w === 0 ? 'Acme Legal' : `Workspace ${w + 1}`;
    const slug = `${w === 0 ? 'acme-legal' : `workspace-${w + 1}`}-${rng.hex(4)}`;
    const tier = TIERS[w % TIERS.length]!;
    out.push('workspaces', { id, name, slug, tier, reply_to: null, created_at: born });
    workspaces.push({ id, slug, tier });
    const key = keyRow(out, rng, id, false, born);
    keys.push(key);
    if (w === 0) keys.push(keyRow(out, rng, id, true, born));
    keyRow(out, rng, id, false, born, now - 30 * DAY); // a revoked one, as rotation leaves
    const hooks: SeedWorkspace['hooks'] = [];
    // The dominant workspace and every second other one use webhooks.
    if (w % 2 === 0) {
      for (const events of w === 0 ? [[], ['document.completed']] : [[]]) {
        const hookId = rng.id('hook');
        out.push('hooks', {
          id: hookId,
          workspace_id: id,
          target_url: `https://hooks.example.com/${slug}/${rng.hex(6)}`,
          events: JSON.stringify(events),
          secret: `whsec_${rng.bytes(32).toString('base64url')}`,
          document_id: null,
          source: 'dashboard',
          created_at: born,
          deleted_at: null,
        });
        hooks.push({ id: hookId, events });
      }
    }
    const tpls: SeedWorkspace['templates'] = [];
    for (let t = 0; t < (w === 0 ? 25 : 3); t++) {
      const tplId = rng.id('tpl');
      const versions = rng.int(1, 4);
      const archived = t === 24;
      out.push('templates', {
        id: tplId,
        workspace_id: id,
        name: `Template ${t + 1}`,
        current_version: versions,
        archived_at: archived ? now - 90 * DAY : null,
        created_at: born,
        updated_at: born,
      });
      for (let v = 1; v <= versions; v++) out.push('template_versions', versionRow(tplId, v, blobs, key.keyId, born));
      if (!archived) {
        tpls.push({ id: tplId, version: versions });
        templates.push({ workspaceId: id, templateId: tplId, version: versions });
      }
    }
    const userId = rng.id('usr');
    const email = `owner.${slug}@example.com`;
    out.push('users', { id: userId, email, password_hash: null, created_at: born });
    out.push('workspace_members', {
      workspace_id: id,
      user_id: userId,
      role: 'owner',
      created_by: null,
      created_at: born,
    });
    users.push({ userId, workspaceId: id, email });
    seedWs.push({ id, name, keyId: key.keyId, hooks, templates: tpls, locale: LOCALES[w % LOCALES.length]! });
  }
  return { workspaces, seedWs, keys, users, templates };
}

function keyRow(
  out: RowBuffer,
  rng: Rng,
  workspaceId: string,
  legacy: boolean,
  at: number,
  revokedAt: number | null = null,
): SeedKey {
  const plaintext = `${legacy ? LEGACY_PREFIX : CURRENT_PREFIX}${rng.hex(32)}`;
  const keyId = rng.id('key');
  out.push('api_keys', {
    id: keyId,
    workspace_id: workspaceId,
    label: plaintext.slice(0, 12),
    key_hash: hashKey(plaintext),
    legacy: legacy ? 1 : 0,
    created_at: at,
    revoked_at: revokedAt,
    revoked_by: revokedAt === null ? null : 'dashboard:owner',
    allowed_ips: '[]',
    allowed_origins: '[]',
  });
  return { workspaceId, keyId, plaintext, legacy };
}

const versionRow = (templateId: string, version: number, blobs: SeedBlobs, keyId: string, at: number) => ({
  template_id: templateId,
  version,
  file_name: 'template.pdf',
  page_count: 1,
  original_sha256: blobs.original.sha256,
  original_blob: blobs.original.key,
  prepared_sha256: blobs.prepared.sha256,
  prepared_blob: blobs.prepared.key,
  slots: JSON.stringify([{ name: 'signer', signing_order: 1 }]),
  fields: JSON.stringify([
    {
      key: 'signature',
      type: 'signature',
      slot: 'signer',
      required: true,
      readonly: false,
      page: 1,
      box: { x: 72, y: 600, width: 180, height: 40 },
    },
  ]),
  created_by_key_id: keyId,
  created_at: at,
});

/**
 * The key-use log holds the last 30 days only (prune-key-uses): about as many requests a day as a busy integration
 * makes, plus a fixed set just past retention for the pruning job.
 */
async function seedKeyUses(
  out: RowBuffer,
  flush: () => Promise<void>,
  rng: Rng,
  keys: SeedKey[],
  documents: number,
  now: number,
): Promise<void> {
  const routes = [
    ['GET', '/v1/documents/:id', 200],
    ['POST', '/v1/signing-requests', 201],
    ['GET', '/v1/hooks', 200],
    ['GET', '/v1/documents/:id/signed', 200],
    ['GET', '/v1/documents/:id', 404],
  ] as const;
  const n = Math.max(1_000, Math.round(documents / 2));
  for (let i = 0; i < n + PRUNE_DUE; i++) {
    // 80% through the dominant workspace's key, in time order (the recorder writes them so).
    const key = rng.chance(0.8) ? keys[0]! : rng.pick(keys);
    const [method, route, status] = rng.pick(routes);
    const at =
      i < PRUNE_DUE
        ? now - KEY_USE_RETENTION_MS - (PRUNE_DUE - i) * 60_000
        : now - KEY_USE_RETENTION_MS + Math.floor(((i - PRUNE_DUE + 1) / n) * KEY_USE_RETENTION_MS) - 1;
    out.push('key_uses', {
      key_id: key.keyId,
      workspace_id: key.workspaceId,
      at,
      ip_masked: '203.0.113.0',
      method,
      route,
      status,
    });
    if (out.size >= ROWS_PER_TRANSACTION) await flush();
  }
  await flush();
}
