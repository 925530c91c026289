// Bulk send from the dashboard, on the real app on a real port: the example CSV is what the API takes (uploaded
// back, its dry run finds no problem), a dry run lists every bad row and creates nothing, "Send N rows" queues the
// job and the progress page follows it to completed with each row's document linked, the instances' trails name
// the person; CSRF and the role gate on every POST; bad uploads answered with words, the version kept.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startE2E, type E2E } from '../testing/e2e.js';
import { templateSteps } from '../templates/testing/e2e.js';
import { bulkCsv, countRows, HEADER } from '../templates/testing/bulk.js';
import { MAX_BULK_ROWS } from '../limits.js';
import { dashboardClient, signedIn, type DashboardClient } from './testing/client.js';

/** The hidden CSV the dry-run page carries to "Send N rows", unescaped as a browser would. */
const carriedCsv = (html: string): string => {
  const m = /name="csv" value="([^"]*)"/.exec(html);
  assert.ok(m, 'the dry-run page carries the CSV to its send form');
  return m[1]!.replace(/&#(\d+);|&#x([0-9a-f]+);|&(quot|amp|lt|gt|#39);/gi, (all, dec, hex, named) => {
    if (dec) return String.fromCodePoint(Number(dec));
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    return ({ quot: '"', amp: '&', lt: '<', gt: '>', '#39': "'" } as Record<string, string>)[named] ?? all;
  });
};

describe('bulk send from the dashboard', () => {
  let e: E2E;
  let member: DashboardClient;
  let memberEmail: string;
  let tplId: string;
  const { newTemplate } = templateSteps(() => e);
  const bulkPath = () => `/dashboard/templates/${tplId}/bulk`;
  const upload = (c: DashboardClient, content: string | Buffer, name = 'people.csv', fields = {}) =>
    c.postMultipart(`${bulkPath()}/dry-run`, { version: '1', ...fields }, { file: { name, content } });
  const count = (table: 'bulk_sends' | 'template_instances') => countRows(e.h.db, table, tplId);

  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
    ({ client: member, email: memberEmail } = await signedIn(e.h, e.workspaceId, 'member'));
    tplId = (await newTemplate()).id;
  });
  after(() => e?.close());

  test('the example CSV has the columns the API takes: uploaded back, its dry run finds no problem', async () => {
    const pageRes = await member.get(bulkPath());
    assert.equal(pageRes.status, 200, pageRes.text.slice(0, 300));
    assert.match(pageRes.text, /enctype="multipart\/form-data"/);
    assert.match(pageRes.text, new RegExp(`href="${bulkPath()}/example.csv\\?version=1"`));
    const ex = await member.get(`${bulkPath()}/example.csv?version=1`);
    assert.equal(ex.status, 200);
    assert.match(ex.headers['content-type'] ?? '', /^text\/csv/);
    assert.match(ex.headers['content-disposition'] ?? '', /attachment; filename=".+-v1-bulk-example\.csv"/);
    const [header, row, ...rest] = ex.text.trimEnd().split('\r\n');
    assert.deepEqual(rest, [], 'a header and one example row');
    for (const column of HEADER.split(',')) assert.ok(header!.split(',').includes(column), `has ${column}`);
    assert.ok(header!.includes('client.phone') && header!.includes('provider.channel'), 'phone and channel too');
    assert.equal(row!.split(',').length, header!.split(',').length, 'one cell per column');

    const api = await e.h.request('POST', `/v1/templates/${tplId}/bulk-sends?dry_run=true`, {
      token: e.token,
      rawBody: ex.text,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(api.status, 200, api.text);
    assert.deepEqual(api.json.dry_run, { total: 1, valid: 1, invalid: 0, rows: [] });
    const dry = await upload(member, ex.text, 'example.csv');
    assert.equal(dry.status, 200, dry.text.slice(0, 500));
    assert.match(dry.text, /<strong>1<\/strong> of 1 rows are ready to send; <strong>0<\/strong> have problems\./);
    assert.doesNotMatch(dry.text, /Rows with problems/);
    assert.match(dry.text, />Send 1 row</);
    assert.equal(await count('bulk_sends'), 0, 'a dry run sends nothing');
  });

  test('dry run lists every bad row with its problems and creates nothing; Send N rows runs to completed', async () => {
    const csv = bulkCsv('dash', 12, { 3: 'email', 7: 'plan', 11: 'cells' });
    const dry = await upload(member, csv);
    assert.equal(dry.status, 200, dry.text.slice(0, 500));
    assert.match(dry.text, /<strong>9<\/strong> of 12 rows are ready to send; <strong>3<\/strong> have problems\./);
    const bad = [...dry.text.matchAll(/<th scope="row">(\d+)<\/th>\s*<td><ul>(.*?)<\/ul>/gs)];
    assert.deepEqual(
      bad.map((m) => Number(m[1])),
      [3, 7, 11],
      'exactly the bad rows, by number',
    );
    for (const m of bad) assert.match(m[2]!, /<li>.+<\/li>/, `row ${m[1]}: its problems are listed`);
    assert.match(dry.text, />Send 9 rows</);
    assert.equal(await count('bulk_sends'), 0, 'the dry run made no bulk send');
    assert.equal(await count('template_instances'), 0, 'nor an instance');

    const formKey = /name="form_key" value="([0-9a-f]{32})"/.exec(dry.text)?.[1];
    assert.ok(formKey, 'the Send form carries a one-time key');
    const sendForm = { version: '1', csv: carriedCsv(dry.text), form_key: formKey };
    const sent = await member.postMultipart(bulkPath(), sendForm);
    assert.equal(sent.status, 303, sent.text.slice(0, 500));
    const where = sent.headers.location ?? '';
    assert.match(where, /^\/dashboard\/bulk-sends\/bulk_[0-9a-f]{24}$/);
    // The same form posted again (a double click, a resubmitted page): the same send, nothing new.
    await member.get(bulkPath());
    const again = await member.postMultipart(bulkPath(), sendForm);
    assert.equal(again.headers.location, where, 'the second post leads to the first send');
    assert.equal(await count('bulk_sends'), 1, 'one bulk send for one form');
    const queued = await member.get(where);
    assert.equal(queued.status, 200);
    assert.equal(queued.headers.refresh, '2', 'a running send reloads itself without JavaScript');
    // Only the unreadable row (11) has its outcome before the job runs; rows 3 and 7 are judged when sent.
    assert.match(queued.text, /<progress id="bulk-bar" value="1" max="12">/);
    assert.match(queued.text, /badge pending">Queued</);
    assert.match(queued.text, new RegExp(`href="${where}">Refresh now<`));

    await e.work();
    const done = await member.get(where);
    assert.equal(done.headers.refresh, undefined, 'a finished send stops reloading');
    assert.match(done.text, /badge succeeded">Completed</);
    assert.match(done.text, /<progress id="bulk-bar" value="12" max="12">/);
    assert.match(done.text, /12 of 12 rows done: 9 sent, 3 failed\./);
    const docs = [...done.text.matchAll(/href="\/dashboard\/documents\/([^"]+)">tin_/g)].map((m) => m[1]!);
    assert.equal(docs.length, 9, 'each sent row links its document');
    assert.equal(await count('template_instances'), 9);

    const trail = await e.api('GET', `/v1/documents/${docs[0]}/audit-trail`);
    assert.equal(trail.status, 200, trail.text);
    const actors = new Set(trail.json.entries.map((x: { actor: string }) => x.actor));
    assert.ok(actors.has(`user:${memberEmail}`), `the trail names the person: ${[...actors].join(', ')}`);
  });

  test('CSRF: both POSTs without the token are refused (403) and create nothing', async () => {
    const before = await count('bulk_sends');
    const dry = await upload(member, bulkCsv('csrf', 2), 'people.csv', {});
    assert.equal(dry.status, 200, 'with the token it passes');
    for (const r of [
      await member.postMultipart(
        `${bulkPath()}/dry-run`,
        {},
        { file: { name: 'a.csv', content: 'x' } },
        { csrf: null },
      ),
      await member.postMultipart(bulkPath(), { csv: bulkCsv('csrf', 2) }, {}, { csrf: null }),
      await member.postMultipart(bulkPath(), { csv: bulkCsv('csrf', 2) }, {}, { csrf: 'forged' }),
    ]) {
      assert.equal(r.status, 403, r.text.slice(0, 300));
      assert.match(r.text, /This form has expired/);
    }
    assert.equal(await count('bulk_sends'), before, 'nothing sent');
  });

  test('role: a signed-out visitor posting either form is sent to sign-in, and nothing is made', async () => {
    const anon = dashboardClient(e.h);
    await anon.get('/dashboard/sign-in');
    const before = await count('bulk_sends');
    for (const path of [`${bulkPath()}/dry-run`, bulkPath()]) {
      const r = await anon.postMultipart(path, { csv: bulkCsv('anon', 2) });
      assert.equal(r.status, 303, `${path}: ${r.status}`);
      assert.match(r.headers.location ?? '', /^\/dashboard\/sign-in/);
    }
    assert.equal((await anon.get(bulkPath())).status, 303, 'the page too');
    assert.equal(await count('bulk_sends'), before);
  });

  test('bad uploads: no file, not a CSV, too many rows, an unknown column: words, and the version kept', async () => {
    const expectRefusal = async (r: Awaited<ReturnType<DashboardClient['get']>>, text: RegExp) => {
      assert.equal(r.status, 400, r.text.slice(0, 300));
      assert.match(r.text, /<p class="notice error" role="alert" id="bulk-error">/);
      assert.match(r.text, text);
      assert.match(r.text, /<input type="hidden" name="version" value="1">/, 'the version is kept');
      assert.match(r.text, /aria-invalid="true"/);
    };
    const none = await member.postMultipart(
      `${bulkPath()}/dry-run`,
      { version: '1' },
      { file: { name: '', content: '' } },
    );
    await expectRefusal(none, /Choose a CSV file to upload\./);
    await expectRefusal(await upload(member, '%PDF-1.7\n', 'contract.pdf'), /“contract\.pdf” is not a CSV file\./);
    const many = bulkCsv('many', MAX_BULK_ROWS + 1);
    await expectRefusal(await upload(member, many), new RegExp(`at most ${MAX_BULK_ROWS} rows`));
    const unknown = await upload(member, 'client.name,colour\nAda,blue\n');
    await expectRefusal(unknown, /Unknown column\(s\) &quot;colour&quot;/);
    const send = await member.postMultipart(bulkPath(), { version: '1', csv: '' });
    await expectRefusal(send, /Choose a CSV file to upload\./);
    assert.equal(await count('bulk_sends'), 1, 'only the earlier test’s send');
  });

  test('in the visitor’s language: German words, the API’s problems marked as English', async () => {
    const { client: de } = await signedIn(e.h, e.workspaceId, 'member', undefined, { acceptLanguage: 'de' });
    const page = await de.get(bulkPath());
    assert.match(page.text, /Massenversand/);
    const dry = await upload(de, bulkCsv('de', 3, { 2: 'email' }));
    assert.match(dry.text, /<strong>2<\/strong> von 3 Zeilen sind versandbereit/);
    assert.match(dry.text, /<ul lang="en"><li>/, 'the API’s English is marked');
    assert.match(dry.text, />2 Zeilen senden</);
  });
});
