// Issue 25: no hot path reads a growing table whole. The real app on a real port, on SQLite and PostgreSQL, runs the
// hot paths over HTTP (API reads and writes, hooks, downloads, instantiate, signer page and actions, the delivery,
// mail and sealing workers, every scheduled job, the dashboard's lists, filters, search, deep pages, key-use and
// audit-log pages) while db.ts hands every statement to this test (`captureStatements`); then each distinct
// statement's plan is read with its own parameters (`fullScans`, after ANALYZE on PostgreSQL) and the test fails
// naming every statement that scans a table outside SMALL_TABLES.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { captureStatements, substringIndex, type CapturedStatement } from './db.js';
import { explainable, fullScans, planOf, triggerStatements } from './query-plans.js';
import { JOB_NAMES } from '../jobs/names.js';
import { setAllowedOrigins } from '../keys/keys.repo.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { signedIn } from '../dashboard/testing/client.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import type { SeedSummary } from '../testing/seed/seed.js';
import { seededCopy } from '../testing/seed/cache.js';
import { RETIRED_TITLE } from '../testing/seed/history-parts.js';
import { listWorkspaceDocuments } from '../signing/document-list.repo.js';
import { RETENTION_DAYS } from '../limits.js';
import { setWorkspaceRetentionDays } from '../workspaces/settings.service.js';

/**
 * Tables a full scan of which is fine, each with why: they grow with configuration, not with traffic, and stay in
 * the tens or hundreds of rows per installation's workspace.
 */
export const SMALL_TABLES: Readonly<Record<string, string>> = {
  kysely_migration: 'one row per migration',
  kysely_migration_lock: 'one row',
  settings: 'operator settings, a handful of rows',
};

/**
 * Statements whose whole result is the point, so an index cannot make them cheaper than what they return: the
 * spec's unpaged list of a workspace's hooks (`GET /v1/hooks`, the dashboard's webhooks page).
 */
const WHOLE_RESULT = [/^select \* from "hooks" where "workspace_id" = \S+ and "deleted_at" is null order by/];

const databases = await bothDatabases();
const PDF = b64(await makePdf({ pages: 1, text: [['Mutual NDA']] }));
const ORIGIN = 'https://portal.example';
const tag = () => Math.random().toString(36).slice(2, 8);
// The CI history; QUERY_PLANS_DOCUMENTS=2000 for a quick local run.
const DOCUMENTS = Number(process.env.QUERY_PLANS_DOCUMENTS ?? 50_000);
const KEEP_HISTORY = Object.fromEntries(
  ['EVENTS', 'KEY_USES', 'OUTBOX', 'SESSIONS', 'JOB_RUNS'].map((t) => [`RETENTION_${t}_DAYS`, '3650']),
);

for (const d of databases) {
  describe(`query plans of the hot paths (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let seeded: SeedSummary;
    let seedMs = 0;
    const seen = new Map<string, CapturedStatement>();
    let recording = false;
    before(async () => {
      // A copy of the run's kept history (seed/cache.ts: bench:scale in CI copies the same one), seeded now if
      // there is none for this code yet.
      const t0 = performance.now();
      const copy = await seededCopy(d.database, DOCUMENTS);
      seeded = copy.summary;
      seedMs = performance.now() - t0;
      captureStatements((s) => {
        if (recording && !seen.has(s.sql)) seen.set(s.sql, s);
      });
      try {
        // Retention longer than the seeded years: each prune statement still runs (and is planned) once, without
        // deleting the whole seeded history batch by batch, which is the prune tests' and bench:prune's work.
        e = await startE2E({ ...copy.harness, start: seeded.now, tier: 'enterprise', env: KEEP_HISTORY });
      } finally {
        captureStatements(null);
      }
    });
    after(() => e?.close());

    const ok = (r: { status: number; text: string; json?: any }, status?: number) => {
      if (status) assert.equal(r.status, status, r.text.slice(0, 500));
      else assert.ok(r.status >= 200 && r.status < 300, `${r.status} ${r.text.slice(0, 500)}`);
      return r;
    };
    const send = async (title: string, n = 1, extra: Record<string, unknown> = {}) => {
      const people = Array.from({ length: n }, (_, i) => ({
        role: `signer${i + 1}`,
        email: `p${i}.${tag()}@example.com`,
        name: `Person ${i}`,
      }));
      const r = ok(
        await e.h.request('POST', '/v1/signing-requests', {
          token: e.token,
          headers: { 'idempotency-key': `k-${tag()}` },
          body: {
            title,
            signers: people,
            file: { name: 'nda.pdf', content_base64: PDF },
            placement: 'auto_append',
            ...extra,
          },
        }),
        201,
      );
      return { doc: r.json.document_id as string, requests: r.json.signing_requests as { id: string }[], people };
    };

    test('every statement of the hot paths reads through an index', { timeout: 900_000 }, async (t) => {
      t.diagnostic(`a history of ${DOCUMENTS} documents seeded or copied in ${Math.round(seedMs)} ms`);
      const t0 = performance.now();
      recording = true;
      // The seeded dominant workspace first, so each statement is planned with its parameters (the first seen).
      const big = seeded.workspaces[0]!;
      const bigKey = seeded.keys.find((k) => k.workspaceId === big.id && !k.legacy)!;
      const asBig = (path: string) => e.h.request('GET', path, { token: bigKey.plaintext });
      ok(await asBig(`/v1/documents/${seeded.sample.completed}`));
      ok(await asBig(`/v1/documents/${seeded.sample.completed}/signed`));
      ok(await asBig(`/v1/documents/${seeded.sample.open}`));
      ok(await asBig('/v1/hooks'));
      const st = seeded.signerTokens[0]!.token;
      ok(await e.h.request('GET', `/sign/${st}`));
      ok(await e.h.request('POST', `/sign/${st}/view`));
      const { client: owner } = await signedIn(e.h, big.id, 'owner');
      const deepCursor = `${e.h.clock.now() - 500 * 86_400_000}.doc_zzzz`;
      for (const path of [
        '/dashboard/overview',
        '/dashboard/documents',
        '/dashboard/documents?status=completed',
        '/dashboard/documents?status=declined&q=agreement',
        '/dashboard/documents?q=agreement',
        `/dashboard/documents?q=${encodeURIComponent(RETIRED_TITLE)}`,
        '/dashboard/documents?q=100%25',
        '/dashboard/documents?q=%D0%B4%D0%BC%D0%B8%D1%82%D1%80%D0%B8%D0%B9',
        '/dashboard/documents?q=a',
        `/dashboard/documents?q=${seeded.sample.open}`,
        `/dashboard/documents?before=${deepCursor}`,
        `/dashboard/documents?status=completed&before=${deepCursor}`,
        `/dashboard/documents?q=example&before=${deepCursor}`,
        `/dashboard/documents/${seeded.sample.completed}`,
        '/dashboard/reviews',
        '/dashboard/developers/keys',
        `/dashboard/developers/keys/${bigKey.keyId}`,
        '/dashboard/developers/webhooks',
        '/dashboard/audit-log',
        '/dashboard/templates',
      ])
        ok(await owner.get(path));
      // A page of one: a period holds more matches than its capped read takes, so PostgreSQL reads it by days.
      const pageOfOne = await listWorkspaceDocuments(e.h.db.kysely, {
        workspaceId: big.id,
        search: RETIRED_TITLE,
        limit: 1,
        textIndex: substringIndex(e.h.db),
        walkRows: 1,
      });
      assert.equal(pageOfOne.length, 1);
      // The scheduled jobs, on the seeded due rows.
      // Not the daily orphan sweep: it reads each table with a blob column once by design (blob-orphans.ts).
      for (const name of JOB_NAMES) if (name !== 'sweep-orphan-blobs') await e.h.runtime.runJob(name);

      const api = e.api;
      // /v1: workspace, hooks, signing requests (with a callback hook), reads, template instantiate, embed session.
      ok(await api('GET', '/v1/me'));
      const hook = ok(await api('POST', '/v1/hooks', { target_url: e.rx.url('/extra'), events: [] }), 201);
      ok(await api('GET', '/v1/hooks'));
      ok(await api('DELETE', `/v1/hooks/${hook.json.id}`), 204);
      const signed = await send(`Alpha ${tag()} 100% deal`, 2, { callback_url: e.rx.url('/cb') });
      const declined = await send(`Beta_${tag()} plan`);
      const expiring = await send(`Дмитрий ${tag()} 王小明`);
      ok(await api('GET', `/v1/documents/${signed.doc}`));
      ok(await api('GET', `/v1/signing-requests/${signed.requests[0]!.id}`));
      ok(await api('POST', `/v1/signing-requests/${expiring.requests[0]!.id}/remind`));
      const tpl = ok(await api('POST', '/v1/templates', await templateBody(`Tpl ${tag()}`)), 201);
      const recipients = [
        { slot: 'client', name: 'Client Person', email: `client.${tag()}@example.com` },
        { slot: 'provider', name: 'Provider Person', email: `provider.${tag()}@example.com` },
      ];
      ok(await api('POST', `/v1/templates/${tpl.json.id}/instantiate`, { recipients, field_values: VALUES }), 201);
      const staged = ok(
        await api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
          recipients,
          field_values: VALUES,
          review: true,
        }),
        201,
      ).json.template_instance;
      ok(await api('GET', `/v1/template-instances/${staged.id}`));
      const review = new URL(staged.review_url as string).pathname;
      ok(await e.h.request('GET', review));
      ok(await api('POST', `/v1/template-instances/${staged.id}/confirm`, {}));
      await setAllowedOrigins(e.h.db.kysely, (await keyIdOf(e)) as string, [ORIGIN]);
      ok(
        await api('POST', '/v1/embedded/sign-sessions', {
          signing_request_id: expiring.requests[0]!.id,
          origin: ORIGIN,
          locale: 'en',
          ttl_seconds: 600,
        }),
        201,
      );
      // The workers: mail, webhook deliveries (claim and record), sealing.
      await e.work();

      // The signer's page and actions; then the sealed downloads and the signer's copy.
      for (const p of signed.people) {
        const token = await e.linkFor(p.email);
        ok(await e.h.request('GET', `/sign/${token}`));
        ok(await e.h.request('GET', `/sign/${token}/document.pdf`));
        ok(await e.h.request('POST', `/sign/${token}/view`));
        ok(await e.h.request('POST', `/sign/${token}/sign`, { body: { signature: { type: 'typed', text: p.name } } }));
      }
      const dt = await e.linkFor(declined.people[0]!.email);
      ok(await e.h.request('POST', `/sign/${dt}/decline`, { body: { reason: 'Wrong amount' } }));
      await e.work();
      ok(await api('GET', `/v1/documents/${signed.doc}/signed`));
      ok(await api('GET', `/v1/documents/${signed.doc}/audit-trail`));
      const copy = /\/copy\/([A-Za-z0-9_-]{43})/.exec(
        (await e.smtp.parsed()).map((m) => m.text ?? '').find((t) => t.includes('/copy/')) ?? '',
      )?.[1];
      if (copy) ok(await e.h.request('GET', `/copy/${copy}`));
      // Purge (issue 26): an ended document through the API, and the job's walk of a workspace with a retention.
      ok(await api('DELETE', `/v1/documents/${declined.doc}`));
      const retention = { workspaceId: e.workspaceId, days: RETENTION_DAYS.max, actor: 'cli:test' };
      await setWorkspaceRetentionDays(e.h.db, retention, e.h.clock.now());
      await e.h.runtime.runJob('purge-documents');

      recording = false;
      t.diagnostic(`hot paths ran in ${Math.round(performance.now() - t0)} ms`);
      const t1 = performance.now();

      if (e.h.db.dialect === 'postgres') await sql`analyze`.execute(e.h.db.kysely);
      const problems: string[] = [];
      const sorted: string[] = [];
      let read = 0;
      for (const s of seen.values()) {
        if (!explainable(s) || WHOLE_RESULT.some((r) => r.test(s.sql))) continue;
        read++;
        const steps = await planOf(e.h.db, s);
        const scans = steps.filter((x) => x.fullScan && !(x.table! in SMALL_TABLES));
        // Not a failure: a page that sorts every row matching its conditions (bounded by them, not by the table).
        if (/\blimit\b/.test(s.sql) && steps.some((x) => /^(USE TEMP B-TREE FOR ORDER BY|Sort)$/.test(x.how)))
          sorted.push(s.sql.slice(0, 160));
        if (scans.length > 0) problems.push(`${scans.map((x) => x.how).join(', ')}\n    ${s.sql}`);
      }
      t.diagnostic(`${read} statements explained in ${Math.round(performance.now() - t1)} ms`);
      for (const q of sorted) t.diagnostic(`sorts its matches for a page: ${q}`);
      assert.ok(read > 60, `only ${read} statements captured`);
      assert.deepEqual(problems, [], `${problems.length} statements scan a growing table:\n  ${problems.join('\n  ')}`);

      // A deep page seeks: the row comparison is an index condition, not a filter over the newer documents.
      const plan = async (pick: (sql: string) => boolean) => {
        const s = [...seen.values()].find((x) => pick(x.sql));
        assert.ok(s, 'statement captured');
        return (await planOf(e.h.db, s)).map((p) => p.how).join('\n');
      };
      const deep = await plan(
        (q) => q.includes('("documents"."created_at", "documents"."id") <') && !/like|match/.test(q),
      );
      assert.match(deep, /USING INDEX \w+ \(workspace_id=\? AND \(created_at,id\)<|ROW\(created_at, id\) < ROW/, deep);
      // A search of 3 characters or more reads the text index.
      // On PostgreSQL both arms of a period's capped read and of a days' read go through 026's time-keyed indexes.
      const searched = await plan((q) => /document_search match|signet_search_keys\(.*\blimit\b/.test(q));
      assert.match(
        searched,
        e.h.db.dialect === 'sqlite' ? /VIRTUAL TABLE INDEX \d+:M/ : /documents_search_keys/,
        searched,
      );
      if (e.h.db.dialect === 'postgres') {
        assert.match(searched, /signing_requests_search_keys/, searched);
        const days = await plan((q) => /signet_search_keys\(/.test(q) && !/\blimit\b/.test(q));
        assert.match(days, /documents_search_keys[^]*signing_requests_search_keys/, days);
      }
    });

    // A trigger's statements run inside the statement that fires it, unseen by that statement's plan: a purge's
    // deletes once read the whole text index per row through them (migration 025).
    test('every statement inside a trigger reads through an index', async () => {
      const statements = await triggerStatements(e.h.db);
      if (e.h.db.dialect === 'sqlite') assert.ok(statements.length >= 8, `${statements.length} trigger statements`);
      const problems: string[] = [];
      for (const s of statements) {
        if (!explainable(s)) continue;
        const scans = (await fullScans(e.h.db, s)).filter((x) => !(x.table in SMALL_TABLES));
        if (scans.length > 0) problems.push(`${s.trigger}: ${scans.map((x) => x.how).join(', ')}\n    ${s.sql}`);
      }
      assert.deepEqual(problems, [], `${problems.length} trigger statements scan a growing table`);
    });

    test('the check fails on a full scan, naming the table', async () => {
      const scans = await fullScans(e.h.db, {
        sql: 'select * from "documents" where "title" = ?'.replace('?', d.name === 'SQLite' ? '?' : '$1'),
        parameters: ['x'],
      });
      assert.deepEqual(
        scans.map((x) => x.table),
        ['documents'],
      );
      assert.deepEqual(
        await fullScans(e.h.db, {
          sql: `select * from "documents" where "id" = ${d.name === 'SQLite' ? '?' : '$1'}`,
          parameters: ['x'],
        }),
        [],
      );
    });
  });
}

async function keyIdOf(e: E2E): Promise<string> {
  const r = await e.h.db.kysely
    .selectFrom('api_keys')
    .select('id')
    .where('workspace_id', '=', e.workspaceId)
    .executeTakeFirstOrThrow();
  return r.id;
}
