// The review page of staged template instances, end to end in Debian's Chromium: the real app on a real port, a
// template created and instantiated with `review: true` through the API, the review link opened as a person would.
// One instance is confirmed on the page (the first recipient's invitation then arrives), one discarded behind its
// disclosure, one confirmed with JavaScript off; the API agrees each time. Errors, headers and escaping over HTTP.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { axe, CHROMIUM, launchChromium, skipWithoutChromium, watchPage } from '../../testing/browser.js';
import { startE2E, type E2E } from '../../testing/e2e.js';
import { templateBody, VALUES } from '../testing/fixtures.js';

const skip = skipWithoutChromium;
const DAY = 24 * 3600_000;
const SHOTS = os.tmpdir();

const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;

/** A staged instance of `tplId` for two fresh recipients; `path` is the review link's path on the test server. */
async function stage(e: E2E, tplId: string, extra: Record<string, unknown> = {}) {
  const people = { client: email('client'), provider: email('provider') };
  const r = await e.api('POST', `/v1/templates/${tplId}/instantiate`, {
    recipients: [
      { slot: 'client', name: 'Client Person', email: people.client },
      { slot: 'provider', name: 'Provider Person', email: people.provider },
    ],
    field_values: VALUES,
    review: true,
    ...extra,
  });
  assert.equal(r.status, 201, r.text);
  const ti = r.json.template_instance;
  assert.equal(ti.status, 'staged');
  return { ti, people, path: new URL(ti.review_url).pathname as string };
}

/** Opens a page and records anything it complains about, and any request leaving the app's origin. */
async function open(context: BrowserContext, url: string, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  watchPage(page, url, problems, { inline: true });
  const res = await page.goto(url);
  assert.equal(res?.status(), 200, `${url}: ${res?.status()}`);
  return page;
}

/** Size and ink of page 1's canvas: a rendered page is neither empty nor one flat colour. */
const canvasInk = (page: Page) =>
  page.evaluate(() => {
    const c = document.querySelector<HTMLCanvasElement>('[data-page="1"] canvas')!;
    const { data } = c.getContext('2d')!.getImageData(0, 0, c.width, c.height);
    let ink = 0;
    let paper = 0;
    for (let i = 0; i < data.length; i += 4) {
      const dark = data[i + 3]! > 0 && data[i]! + data[i + 1]! + data[i + 2]! < 3 * 160;
      if (dark) ink++;
      else paper++;
    }
    return { width: c.width, height: c.height, ink, paper };
  });

const rowsOf = (page: Page, table: string) =>
  page
    .locator(`table.${table} tbody tr`)
    .evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => (c.textContent ?? '').trim())));

test(
  'review page in Chromium: values shown, confirm invites, discard behind a disclosure, confirm without JavaScript',
  { skip, timeout: 120_000 },
  async (t) => {
    assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
    const e = await startE2E({ tier: 'enterprise' });
    t.after(() => e.close());
    const browser = await launchChromium();
    t.after(() => browser.close());
    const noJs = await launchChromium({ javaScriptEnabled: false });
    t.after(() => noJs.close());
    const problems: string[] = [];
    const serious: string[] = [];

    const created = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
    assert.equal(created.status, 201, created.text);
    const tplId: string = created.json.id;
    const workspaceName: string = (await e.api('GET', '/v1/me')).json.name;

    // ── 1. Confirm on the page ─────────────────────────────────────────────────────────────────────────────────
    const a = await stage(e, tplId, { title: 'Reviewed services agreement' });
    const page = await open(browser.context, e.h.url(a.path), problems);
    await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
    await page.locator('#viewer[data-pages]').waitFor({ timeout: 15_000 });
    await page.locator('[data-page][data-text="ready"]').last().waitFor({ timeout: 15_000 });
    const ink = await canvasInk(page);
    assert.ok(ink.ink > 200 && ink.paper > ink.ink, `page 1 looks blank: ${JSON.stringify(ink)}`);
    assert.equal(await page.locator('[data-page]').count(), 2);

    // The sender's values are on the rendered PDF (pdf.js's text copy for screen readers) and in the table.
    const pdfText = (await page.locator('.page-text').allTextContents()).join('\n');
    for (const v of ['Ada Lovelace Ltd', 'pro', '12', '2026-12-01'])
      assert.ok(pdfText.includes(v), `"${v}" is not in the rendered PDF's text: ${pdfText}`);
    assert.deepEqual(await rowsOf(page, 'values'), [
      ['client_name', 'Ada Lovelace Ltd'],
      ['plan', 'pro'],
      ['seats', '12'],
      ['start_date', '2026-12-01'],
    ]);
    assert.deepEqual(await rowsOf(page, 'recipients'), [
      ['1', 'client', `Client Person${a.people.client}`, 'E-mail'],
      ['2', 'provider', `Provider Person${a.people.provider}`, 'E-mail'],
    ]);
    assert.equal(await page.locator('h1.doc-title').textContent(), 'Reviewed services agreement');
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Services agreement, version 1/);
    assert.ok(facts.includes(workspaceName), facts);
    const deadline = await page.locator('dl.facts time').getAttribute('datetime');
    assert.equal(deadline, a.ti.review_expires_at);
    assert.equal(await page.locator('a.download').getAttribute('href'), `${a.path}/document.pdf`);
    serious.push(...(await axe(page, t, 'staged page')));
    await page.screenshot({ path: path.join(SHOTS, 'review-page.png'), fullPage: true });

    await e.work();
    assert.equal((await e.linksFor(a.people.client)).length, 0, 'staging sends no mail');
    await Promise.all([page.waitForURL(e.h.url(a.path)), page.locator('#confirm-button').click()]);
    await page.locator('body[data-state="confirmed"]').waitFor({ timeout: 10_000 });
    assert.match(await page.locator('#status').innerText(), /Confirmed — the invitations were sent/);
    serious.push(...(await axe(page, t, 'confirmed page')));
    await page.screenshot({ path: path.join(SHOTS, 'review-confirmed.png'), fullPage: true });

    const got = await e.api('GET', `/v1/template-instances/${a.ti.id}`);
    assert.equal(got.json.status, 'confirmed');
    assert.equal(got.json.confirmed_by, 'review_page');
    await e.work();
    assert.match(await e.linkFor(a.people.client), /^[A-Za-z0-9_-]{43}$/, 'the first recipient is invited');
    assert.equal((await e.linksFor(a.people.provider)).length, 0, 'the second turn waits');
    assert.equal(e.eventsOf('template_instance.confirmed', a.ti.document_id)[0]?.actor, 'review_page');
    assert.equal(e.eventsOf('signing_request.sent', a.ti.document_id).length, 1);

    // Confirming again: a page at 409 for a browser, the catalogue's JSON for an API client.
    const again = await e.h.request('POST', `${a.path}/confirm`, {
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: '',
    });
    assert.equal(again.status, 409);
    assert.match(again.headers['content-type']!, /^text\/html/);
    assert.match(again.text, /This document was already confirmed\./);
    assert.match(again.text, new RegExp(`href="${a.path}"`));
    const againJson = await e.h.request('POST', `${a.path}/discard`, { headers: { accept: 'application/json' } });
    assert.equal(againJson.status, 409);
    assert.equal(againJson.json.code, 'already_confirmed');

    // ── 2. Discard behind its disclosure; a title that is markup stays text ────────────────────────────────────
    const b = await stage(e, tplId, { title: '<b>"Draft" & co</b>' });
    const page2 = await open(browser.context, e.h.url(b.path), problems);
    await page2.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
    assert.equal(await page2.locator('h1.doc-title').textContent(), '<b>"Draft" & co</b>');
    assert.equal(await page2.locator('h1.doc-title b').count(), 0);
    assert.equal(await page2.locator('#discard-button').isVisible(), false, 'discarding takes a second step');
    await page2.locator('#discard summary').click();
    await page2.locator('#discard-button').waitFor({ state: 'visible' });
    serious.push(...(await axe(page2, t, 'discard open')));
    await page2.screenshot({ path: path.join(SHOTS, 'review-discard.png') });
    await Promise.all([page2.waitForURL(e.h.url(b.path)), page2.locator('#discard-button').click()]);
    await page2.locator('body[data-state="discarded"]').waitFor({ timeout: 10_000 });
    assert.match(await page2.locator('#status').innerText(), /Discarded — nothing was sent/);
    await page2.screenshot({ path: path.join(SHOTS, 'review-discarded.png'), fullPage: true });
    const gotB = await e.api('GET', `/v1/template-instances/${b.ti.id}`);
    assert.equal(gotB.json.status, 'discarded');
    assert.equal(gotB.json.discard_reason, 'discarded');
    await e.work();
    assert.equal(e.eventsOf('template_instance.discarded', b.ti.document_id).length, 1);
    assert.equal((await e.linksFor(b.people.client)).length, 0);

    // ── 3. Without JavaScript: the tables, the PDF link and the forms still work ───────────────────────────────
    const c = await stage(e, tplId);
    const page3 = await open(noJs.context, e.h.url(c.path), problems);
    assert.equal(await page3.locator('#viewer-message').isVisible(), false, 'no "loading" that never ends');
    assert.match(await page3.locator('#viewer').innerText(), /The preview needs JavaScript/);
    assert.deepEqual((await rowsOf(page3, 'values'))[0], ['client_name', 'Ada Lovelace Ltd']);
    const pdfHref = await page3.locator('#viewer a').getAttribute('href');
    const pdf = await e.h.request('GET', pdfHref!);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    assert.equal(pdf.headers['cache-control'], 'no-store');
    await page3.screenshot({ path: path.join(SHOTS, 'review-nojs.png'), fullPage: true });
    await Promise.all([page3.waitForURL(e.h.url(c.path)), page3.locator('#confirm-button').click()]);
    await page3.locator('body[data-state="confirmed"]').waitFor({ timeout: 10_000 });
    const gotC = await e.api('GET', `/v1/template-instances/${c.ti.id}`);
    assert.equal(gotC.json.status, 'confirmed');
    assert.equal(gotC.json.confirmed_by, 'review_page');
    await e.work();
    assert.match(await e.linkFor(c.people.client), /^[A-Za-z0-9_-]{43}$/);

    // ── 4. A page left open while someone else confirmed: the click meets a readable 409 page ──────────────────
    const d = await stage(e, tplId);
    const staleProblems: string[] = [];
    const page4 = await open(browser.context, e.h.url(d.path), staleProblems);
    assert.equal(
      (await e.h.request('POST', `${d.path}/confirm`, { headers: { accept: 'application/json' } })).status,
      200,
    );
    const [stale] = await Promise.all([
      page4.waitForResponse((r) => r.url().endsWith('/confirm')),
      page4.locator('#confirm-button').click(),
    ]);
    assert.equal(stale.status(), 409);
    await page4.locator('#status[data-code="already_confirmed"]').waitFor({ timeout: 10_000 });
    assert.match(await page4.locator('#status').innerText(), /This document was already confirmed\./);
    serious.push(...(await axe(page4, t, 'error page')));
    await page4.screenshot({ path: path.join(SHOTS, 'review-error.png') });
    await page4.locator('#status a').click();
    await page4.locator('body[data-state="confirmed"]').waitFor({ timeout: 10_000 });
    // Chromium logs the 409 itself; nothing else may appear.
    assert.deepEqual(
      staleProblems.filter((m) => !/status of 409/.test(m)),
      [],
    );

    assert.deepEqual(problems, []);
    assert.deepEqual(serious, [], 'serious or critical accessibility violations');
  },
);

test(
  'review page over HTTP: headers, 404s, JSON clients, locale, the review window closing',
  { timeout: 60_000 },
  async (t) => {
    const e = await startE2E({ tier: 'enterprise' });
    t.after(() => e.close());
    const created = await e.api('POST', '/v1/templates', await templateBody());
    assert.equal(created.status, 201, created.text);
    const tplId: string = created.json.id;

    const a = await stage(e, tplId, { locale: 'de' });
    const res = await e.h.request('GET', a.path, { headers: { accept: 'text/html' } });
    assert.equal(res.status, 200);
    const csp = res.headers['content-security-policy']!;
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /script-src[^;]*unsafe-inline/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(res.text, /<meta name="robots" content="noindex, nofollow">/);
    assert.match(res.text, /<html lang="de">/);
    assert.match(res.text, /Bestätigen und senden/);
    assert.doesNotMatch(res.text, /<script>/, 'no inline script');
    assert.doesNotMatch(res.text, /https?:\/\//, 'nothing from another origin');

    for (const bad of ['/review/nope', `/review/${'A'.repeat(43)}`, `/review/${'A'.repeat(43)}/confirm`]) {
      const r = await e.h.request(bad.endsWith('confirm') ? 'POST' : 'GET', bad, { headers: { accept: 'text/html' } });
      assert.equal(r.status, 404, bad);
      assert.match(r.headers['content-type']!, /^text\/html/);
      assert.match(r.text, /This review link is not valid\./);
      assert.equal(r.headers['x-frame-options'], 'DENY');
    }
    const missingJson = await e.h.request('POST', `/review/${'A'.repeat(43)}/discard`, {
      headers: { accept: 'application/json' },
    });
    assert.equal(missingJson.status, 404);
    assert.equal(missingJson.json.code, 'not_found');

    // A JSON client gets the instance instead of a redirect.
    const ok = await e.h.request('POST', `${a.path}/confirm`, { headers: { accept: 'application/json' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.id, a.ti.id);
    assert.equal(ok.json.status, 'confirmed');
    assert.equal(ok.json.confirmed_by, 'review_page');
    // A browser's form post: 303 to the page, which shows the outcome in the document's language.
    const b = await stage(e, tplId, { locale: 'fr' });
    const post = await e.h.request('POST', `${b.path}/discard`, {
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'x=1',
    });
    assert.equal(post.status, 303);
    assert.equal(post.headers.location, b.path);
    const after = await e.h.request('GET', b.path);
    assert.match(after.text, /data-state="discarded"/);
    assert.match(after.text, /Abandonné — rien n’a été envoyé\./);

    // A generated file under review: no recipients; confirming finalizes it.
    const g = await e.api('POST', `/v1/templates/${tplId}/generate`, { field_values: VALUES, review: true });
    assert.equal(g.status, 201, g.text);
    const gPath = new URL(g.json.template_instance.review_url).pathname;
    const gPage = await e.h.request('GET', gPath);
    assert.match(gPage.text, /Confirm and finalize/);
    assert.doesNotMatch(gPage.text, /class="data recipients"/);
    assert.match(gPage.text, /Ada Lovelace Ltd/);
    const gPost = await e.h.request('POST', `${gPath}/confirm`, { headers: { accept: 'text/html' } });
    assert.equal(gPost.status, 303);
    assert.match((await e.h.request('GET', gPath)).text, /Confirmed — the file was finalized\./);

    // Fourteen days later the window is closed: the page says so, and acting is 410 (page or JSON).
    const c = await stage(e, tplId);
    e.h.clock.advance(14 * DAY);
    const expired = await e.h.request('GET', c.path);
    assert.equal(expired.status, 200);
    assert.match(expired.text, /data-state="expired"/);
    assert.match(expired.text, /The review window has closed\./);
    const late = await e.h.request('POST', `${c.path}/confirm`, { headers: { accept: 'text/html' } });
    assert.equal(late.status, 410);
    assert.match(late.text, /data-code="review_expired"/);
    const lateJson = await e.h.request('POST', `${c.path}/discard`, { headers: { accept: 'application/json' } });
    assert.equal(lateJson.status, 410);
    assert.equal(lateJson.json.code, 'review_expired');
  },
);
