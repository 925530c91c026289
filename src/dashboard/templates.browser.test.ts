// Templates in Debian's Chromium, the way a person works: an admin uploads a PDF with {{…}} markers, sees them
// offered as fields and drawn on the pages, adjusts a few rows; in the visual editor removes the provider's
// marker-placed signature, drops a new one for the provider, drags it, resizes it and moves it with the keyboard
// (its row follows each step), publishes version 1 and finds the API's box equal to the drawn one within 1 pt;
// publishes version 2 from the current one after a keyboard move there, uses the template with review and confirms
// it from "Waiting for review"; the signer is then invited. axe checks every page for serious or critical
// violations; screenshots go to /tmp/signet-templates-shots-* (named in the diagnostics).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { launchChromium, pageShots, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

const shots = pageShots('templates');

describe('dashboard templates in Chromium', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
    browser = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, e.h.url(''), problems);
  });
  after(async () => {
    await browser?.close();
    await e?.close();
  });

  const look = (t: { diagnostic(m: string): void }, name: string) => shots.look(page, t, name);
  const input = (name: string) => page.locator(`[name="${name}"]`);
  type Box = { page: number; x: number; y: number; width: number; height: number };
  // Evaluated as plain functions with no named inner functions (tsx would wrap those in a helper the page lacks).
  /** The row of `key` as typed: its index and its page and box. */
  const rowBox = (key: string) =>
    page.evaluate((key) => {
      const form = document.getElementById('template-editor') as HTMLFormElement;
      let i = 0;
      while (
        form.elements.namedItem(`f.${i}.key`) &&
        (form.elements.namedItem(`f.${i}.key`) as HTMLInputElement).value !== key
      )
        i++;
      const n = ['page', 'x', 'y', 'w', 'h'].map((c) =>
        Number((form.elements.namedItem(`f.${i}.${c}`) as HTMLInputElement).value),
      );
      return { row: i, page: n[0]!, x: n[1]!, y: n[2]!, width: n[3]!, height: n[4]! };
    }, key);
  /** The box of `key` as the editor draws it, measured in points from its pixels on the page drawn. */
  const drawnBox = (key: string) =>
    page.evaluate((key) => {
      const el = [...document.querySelectorAll<HTMLElement>('.fe-field')].find((b) =>
        b.querySelector('.fe-text')!.textContent!.includes(` ${key} `),
      )!;
      const layer = el.parentElement!;
      const pages = JSON.parse(document.getElementById('tpl-editor-data')!.textContent!).pages as Box[];
      const p = pages[Number(layer.dataset.page) - 1]!;
      const [l, b] = [layer.getBoundingClientRect(), el.getBoundingClientRect()];
      return {
        page: Number(layer.dataset.page),
        x: ((b.left - l.left) / l.width) * p.width,
        y: ((b.top - l.top) / l.height) * p.height,
        width: (b.width / l.width) * p.width,
        height: (b.height / l.height) * p.height,
      };
    }, key);
  /** The editor alone, as the person sees it in the viewport (the full page is too tall to read). */
  const lookAtEditor = (name: string) => page.screenshot({ path: shots.next(name) });
  /** Scrolls page 2's top just under the editor's sticky toolbar. */
  const topOfPage2 = async () => {
    await page.evaluate(() => document.querySelector('.fe-layer[data-page="2"]')!.scrollIntoView({ block: 'start' }));
    await page.mouse.wheel(0, -70);
    await page.waitForFunction(
      () => document.querySelector('.fe-layer[data-page="2"]')!.getBoundingClientRect().top > 60,
    );
  };
  const box = (key: string) => page.locator('.fe-field', { hasText: ` ${key} ` });
  /** Drags from the centre of `what` by (dx, dy) CSS pixels. */
  async function dragBy(what: ReturnType<Page['locator']>, dx: number, dy: number) {
    const b = (await what.boundingBox())!;
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2 + dx, b.y + b.height / 2 + dy, { steps: 8 });
    await page.mouse.up();
  }

  test('create from a PDF with markers, publish v2, use it with review, confirm from the dashboard', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
    const pdf = path.join(shots.dir, 'agreement.pdf');
    // The fixture's agreement, but the provider signs on a plain line (no marker): that field is placed by hand.
    const text = [
      ['Services agreement', 'Client: {{client_name}}', 'Plan: {{plan}}', 'Seats: {{seats}}', 'Start: {{start_date}}'],
      [
        'Agreement page 2',
        'Client signature: {{sig_client}}',
        'Provider signature: ____________',
        'Note: {{client_note}}',
      ],
    ];
    fs.writeFileSync(pdf, await makePdf({ text }));

    const link = await createUserLink(e.h, {
      email: 'ops@acme.example',
      workspaceId: e.workspaceId,
      role: 'admin',
      by: 'test',
    });
    await page.goto(e.h.url(new URL(link.url).pathname));
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByLabel('E-mail').fill('ops@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    await look(t, 'templates-empty');
    await page
      .getByRole('button', { name: 'New template' })
      .or(page.getByRole('link', { name: 'New template' }))
      .click();
    await page.getByLabel('Name').fill('Services agreement');
    await page.getByLabel('PDF file').setInputFiles(pdf);
    await look(t, 'template-new');
    await page.getByRole('button', { name: 'Upload and find markers' }).click();
    await page.getByText('6 markers found in').waitFor();
    assert.equal(await input('f.0.anchor').inputValue(), '{{client_name}}');
    await page.locator('body[data-editor="ready"]').waitFor();
    await page.locator('.fe-layer[data-page="2"]').scrollIntoViewIfNeeded();
    await box('client_note').waitFor();
    assert.equal(await page.locator('.fe-field').count(), 6, 'every marker’s field is drawn on its marker');
    await look(t, 'template-markers');
    await topOfPage2();
    await lookAtEditor('template-markers-page-2');

    // Adjust what the markers suggested: plan is a choice, seats an optional number, the note is the client's.
    await input('f.1.type').selectOption('enum');
    await input('f.1.options').fill('basic, pro');
    await input('f.2.type').selectOption('number');
    await input('f.2.required').uncheck();
    await input('f.5.slot').fill('client');
    // The provider's slot, typed in the spare slot row: the editor offers it as a party at once.
    await input('s.1.name').fill('provider');
    await input('s.1.order').fill('2');
    await page.locator('#fe-party option', { hasText: 'provider' }).waitFor({ state: 'attached' });

    // The visual editor. A marker's field does not move (its marker's text would stay printed): it says so.
    const sigClient = await rowBox('sig_client');
    await box('sig_client').focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('#fe-status', { hasText: 'is placed by its marker {{sig_client}}' }).waitFor();
    assert.deepEqual(await rowBox('sig_client'), sigClient, 'the row did not move');
    const layer = page.locator('.fe-layer[data-page="2"]');
    const lb = (await layer.boundingBox())!;
    /** Drags the palette's `type` onto page 2 at (fx, fy), fractions of the page. */
    const drop = async (type: string, fx: number, fy: number) => {
      const pb = (await page.locator(`.fe-type[data-type="${type}"]`).boundingBox())!;
      await page.mouse.move(pb.x + pb.width / 2, pb.y + pb.height / 2);
      await page.mouse.down();
      const to = (await layer.boundingBox())!;
      await page.mouse.move(to.x + to.width * fx, to.y + to.height * fy, { steps: 12 });
      await page.mouse.up();
    };
    await page.locator('#fe-party').selectOption({ label: 'provider' });
    // A field dropped takes the first empty row; Delete on its box empties that row again and hides it.
    const rowsBefore = await page.locator('fieldset.field-row:visible').count();
    await drop('date', 0.6, 0.4);
    await box('date_provider').waitFor();
    const date = await rowBox('date_provider');
    assert.equal(date.row, 6, 'the first spare row');
    assert.equal(await input('f.6.type').inputValue(), 'date');
    await box('date_provider').focus();
    await page.keyboard.press('Delete');
    assert.equal(await input('f.6.key').inputValue(), '');
    assert.equal(await page.locator('fieldset[data-row="6"]').isHidden(), true, 'its row is gone');
    assert.equal(await page.locator('fieldset.field-row:visible').count(), rowsBefore - 1);
    // The provider's signature, dropped on page 2 under the signature lines: its row is made as it lands.
    const [note, p2] = (await page.evaluate(() => {
      const d = JSON.parse(document.getElementById('tpl-editor-data')!.textContent!);
      return [d.markers['{{client_note}}'], d.pages[1]];
    })) as [Box, Box];
    await drop('signature', 150 / p2.width, (note.y + 30) / p2.height);
    await box('signature_provider').waitFor();
    const dropped = await rowBox('signature_provider');
    assert.equal(dropped.row, 6, 'the emptied row is taken again');
    assert.equal(await page.locator('fieldset[data-row="6"]').isVisible(), true);
    assert.equal(await input('f.6.slot').inputValue(), 'provider');
    assert.equal(await input('f.6.type').inputValue(), 'signature');
    assert.deepEqual([dropped.page, dropped.width, dropped.height], [2, 150, 40], 'dropped on page 2, default size');
    // Drag it 40 px right and 30 px down; then resize it by its handle, 36 px wider and 12 px taller.
    await dragBy(box('signature_provider').locator('.fe-text'), 40, 30);
    const dragged = await rowBox('signature_provider');
    const ptPerPx =
      (await page.evaluate(() => JSON.parse(document.getElementById('tpl-editor-data')!.textContent!).pages[1].width)) /
      lb.width;
    assert.ok(Math.abs(dragged.x - dropped.x - 40 * ptPerPx) <= 1, `dragged right: ${dropped.x} → ${dragged.x}`);
    assert.ok(Math.abs(dragged.y - dropped.y - 30 * ptPerPx) <= 1, `dragged down: ${dropped.y} → ${dragged.y}`);
    await dragBy(box('signature_provider').locator('.fe-handle'), 36, 12);
    const resized = await rowBox('signature_provider');
    assert.ok(Math.abs(resized.width - 150 - 36 * ptPerPx) <= 1, `resized wider: ${resized.width}`);
    assert.ok(Math.abs(resized.height - 40 - 12 * ptPerPx) <= 1, `resized taller: ${resized.height}`);
    assert.deepEqual([resized.x, resized.y], [dragged.x, dragged.y], 'resizing keeps the corner');
    // The keyboard alone: three points right, ten down (Shift), two wider (Alt).
    await box('signature_provider').focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Alt+ArrowRight');
    await page.keyboard.press('Alt+ArrowRight');
    const placed = await rowBox('signature_provider');
    const near = (a: number, b: number) => Math.abs(a - b) < 0.011;
    assert.ok(near(placed.x, resized.x + 3) && near(placed.y, resized.y + 10), 'moved by the keyboard');
    assert.ok(near(placed.width, resized.width + 2), 'widened by the keyboard');
    // What the editor draws (measured from its pixels) is what the row says.
    const drawn = await drawnBox('signature_provider');
    for (const k of ['x', 'y', 'width', 'height'] as const)
      assert.ok(Math.abs(drawn[k] - placed[k]) <= 1, `drawn ${k} ${drawn[k]} is the row's ${placed[k]}`);
    await look(t, 'template-editor');
    await topOfPage2();
    await lookAtEditor('template-editor-placed');
    // Its row, as the box left it.
    await page.locator('fieldset[data-row="6"]').scrollIntoViewIfNeeded();
    await lookAtEditor('template-editor-row');
    await page.evaluate(() => document.getElementById('editor')!.scrollIntoView({ block: 'start' }));
    await lookAtEditor('template-editor-top');
    await page.getByRole('button', { name: 'Publish version 1' }).click();
    await page.getByText('Template created: version 1 is published.').waitFor();
    await page.getByText('Version 1 of 1').waitFor();
    await look(t, 'template-v1');
    const tplId = /tpl_[0-9a-f]+/.exec(page.url())![0];
    const apiBox = async (version: number) => {
      const v = await e.api('GET', `/v1/templates/${tplId}/versions/${version}`);
      assert.equal(v.status, 200, v.text);
      const f = (v.json.fields as { key: string; page: number; box: Omit<Box, 'page'> }[]).find(
        (x) => x.key === 'signature_provider',
      )!;
      assert.ok(f, `version ${version} has the dropped field`);
      return { page: f.page, ...f.box };
    };
    const v1 = await apiBox(1);
    for (const k of ['page', 'x', 'y', 'width', 'height'] as const) {
      assert.ok(Math.abs(v1[k] - drawn[k]) <= 1, `v1 ${k}: API ${v1[k]}, drawn ${drawn[k]}`);
      t.diagnostic(`v1 ${k}: API ${v1[k]}, drawn ${drawn[k].toFixed(3)}, row ${placed[k]}`);
    }

    await page
      .getByRole('button', { name: 'Publish a new version' })
      .or(page.getByRole('link', { name: 'Publish a new version' }))
      .click();
    assert.equal(await input('f.1.options').inputValue(), 'basic, pro', 'the form starts from the current version');
    await input('f.0.max_length').fill('80');
    // The editor draws version 1's PDF with its fields; a keyboard move there is what version 2 gets.
    await page.locator('body[data-editor="ready"]').waitFor();
    await page.locator('.fe-layer[data-page="2"]').scrollIntoViewIfNeeded();
    await box('signature_provider').focus();
    await page.keyboard.press('Shift+ArrowLeft');
    const v2Placed = await drawnBox('signature_provider');
    await look(t, 'template-publish');
    await topOfPage2();
    await lookAtEditor('template-publish-editor');
    await page.getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByText('Version 2 of 2').waitFor();
    await look(t, 'template-v2');
    const v2 = await apiBox(2);
    assert.ok(Math.abs(v2.x - (v1.x - 10)) < 0.011, `version 2 is 10 pt left: ${v1.x} → ${v2.x}`);
    for (const k of ['page', 'x', 'y', 'width', 'height'] as const)
      assert.ok(Math.abs(v2[k] - v2Placed[k]) <= 1, `v2 ${k}: API ${v2[k]}, drawn ${v2Placed[k]}`);

    await page
      .getByRole('button', { name: 'Use this template' })
      .or(page.getByRole('link', { name: 'Use this template' }))
      .click();
    await page.locator('#u-0-name').fill('Client Person');
    await page.locator('#u-0-email').fill('client@customer.example');
    await page.locator('#u-1-name').fill('Provider Person');
    await page.locator('#u-1-email').fill('provider@vendor.example');
    await input('client_name').fill('Ada Ltd');
    await input('plan').selectOption('pro');
    await input('start_date').fill('2026-12-01');
    // An address the browser lets through but the API refuses (no dot in the domain): the message, and what was
    // typed is still there.
    await page.locator('#u-1-email').fill('provider@vendor');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Nothing was published or sent.').waitFor();
    assert.equal(await page.locator('#u-0-email').inputValue(), 'client@customer.example');
    assert.equal(await input('client_name').inputValue(), 'Ada Ltd');
    await look(t, 'template-use-refused');
    // The refusal is a 400 page, which Chromium reports on the console: that one, and nothing else, is expected.
    assert.deepEqual(problems.splice(0), [
      'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    await page.locator('#u-1-email').fill('provider@vendor.example');
    await page.getByLabel('Review before sending').check();
    await look(t, 'template-use');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Staged for review').waitFor();
    await look(t, 'reviews');
    await e.work();
    await assert.rejects(e.linkFor('client@customer.example'), /no signer link/, 'nobody invited before confirming');

    await page.getByRole('button', { name: 'Confirm and send Services agreement' }).click();
    await page.getByText('Confirmed: the signers are being invited.').waitFor();
    await look(t, 'reviews-confirmed');
    await e.work();
    assert.ok(await e.linkFor('client@customer.example'), 'confirmed: the first signer is invited');

    await page.getByRole('link', { name: 'Templates' }).click();
    await look(t, 'templates');
    await page.getByRole('link', { name: 'Services agreement' }).click();
    await page
      .getByRole('button', { name: 'Archive template' })
      .or(page.getByRole('link', { name: 'Archive template' }))
      .click();
    await page.getByRole('heading', { name: 'Archive Services agreement?' }).waitFor();
    await look(t, 'template-archive');
    await page.getByRole('button', { name: 'Archive template' }).click();
    await page.getByText('Template archived.').waitFor();
    await look(t, 'template-archived');

    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });

  test('without JavaScript: the rows alone (no editor), a field placed by its box is published as typed', async () => {
    const nojs = await launchChromium({ javaScriptEnabled: false });
    try {
      const p = await nojs.context.newPage();
      const seen: string[] = [];
      watchPage(p, e.h.url(''), seen);
      const link = await createUserLink(e.h, {
        email: 'plain@acme.example',
        workspaceId: e.workspaceId,
        role: 'admin',
        by: 'test',
      });
      await p.goto(e.h.url(new URL(link.url).pathname));
      await p.getByLabel('New password').fill(PASSWORD);
      await p.getByLabel('Repeat it').fill(PASSWORD);
      await p.getByRole('button', { name: 'Set password' }).click();
      await p.getByLabel('E-mail').fill('plain@acme.example');
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.goto(e.h.url('/dashboard/templates/new'));
      await p.getByLabel('Name').fill('Plain agreement');
      await p.getByLabel('PDF file').setInputFiles(path.join(shots.dir, 'agreement.pdf'));
      await p.getByRole('button', { name: 'Upload and find markers' }).click();
      await p.getByText('6 markers found in').waitFor();
      assert.equal(await p.locator('#editor').isHidden(), true, 'no editor without its script');
      assert.equal(await p.locator('.fe-field').count(), 0);
      // (axe needs script in the page; the same page with script was audited above.)
      await p.screenshot({ path: shots.next('no-js') });
      const f = (name: string) => p.locator(`[name="${name}"]`);
      await f('s.1.name').fill('provider');
      await f('f.6.key').fill('sig_provider');
      await f('f.6.type').selectOption('signature');
      await f('f.6.slot').fill('provider');
      for (const [c, v] of [
        ['page', '2'],
        ['x', '180.5'],
        ['y', '190'],
        ['w', '170'],
        ['h', '45'],
      ])
        await f(`f.6.${c}`).fill(v!);
      await p.getByRole('button', { name: 'Publish version 1' }).click();
      await p.getByText('Template created: version 1 is published.').waitFor();
      const id = /tpl_[0-9a-f]+/.exec(p.url())![0];
      const v = await e.api('GET', `/v1/templates/${id}/versions/1`);
      const sig = (v.json.fields as { key: string; page: number; box: object }[]).find((x) => x.key === 'sig_provider');
      assert.deepEqual(sig && { page: sig.page, ...sig.box }, { page: 2, x: 180.5, y: 190, width: 170, height: 45 });
      assert.deepEqual(seen, []);
    } finally {
      await nojs.close();
    }
  });
});
