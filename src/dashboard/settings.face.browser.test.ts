// The Settings page's Workspace section in Debian's Chromium, as a person uses it. Without JavaScript (plain forms):
// an owner renames the workspace, sets a reply-to and a dark accent colour, uploads a PNG logo (a file input in a
// multipart form), sees it shown, and an SVG is refused with its reason beside the form. With JavaScript: the logo
// image really decodes (PNG, then a JPEG), the colour picker appears and fills the text field, axe finds no serious
// or critical violation; a member sees the values and no form. The Language section's <select> sets the workspace's
// default language without JavaScript; a member reads it. Screenshots go to a folder (`$SIGNET_SHOTS/face` or a temp one).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, pageShots, skipWithoutChromium, statusLine, watchPage } from '../testing/browser.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { GIF, SVG, makeJpeg, makePng } from '../workspaces/testing/images.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import { createUserLink } from './people.service.js';
import type { Role } from './people.repo.js';
import { PASSWORD } from './testing/client.js';

const shots = pageShots('face');
const workspaceSection = (page: Page) => page.locator('section[aria-labelledby="workspace-title"]');
const languageSection = (page: Page) => page.locator('section[aria-labelledby="language-title"]');

/** A 300×80 logo: a dark green field with a white bar and a lighter square, so a screenshot shows it was drawn. */
const LOGO = makePng(300, 80, (x, y) =>
  x > 20 && x < 80 && y > 20 && y < 60
    ? [120, 200, 160, 255]
    : y > 34 && y < 46 && x > 100 && x < 280
      ? [255, 255, 255, 255]
      : [11, 61, 46, 255],
);

describe('dashboard settings: the workspace section in Chromium', { skip: skipWithoutChromium }, () => {
  let h: Harness;
  let workspaceId: string;
  const browsers: Awaited<ReturnType<typeof launchChromium>>[] = [];
  const problems: string[] = [];
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-face-files-'));
  const file = (name: string, bytes: Uint8Array) => {
    const p = path.join(files, name);
    fs.writeFileSync(p, bytes);
    return p;
  };

  before(async () => {
    h = await startHarness({ start: Date.now() });
    workspaceId = (await h.workspace('business', 'Acme Face')).id;
  });
  after(async () => {
    for (const b of browsers) await b.close();
    await h?.close();
    fs.rmSync(files, { recursive: true, force: true });
  });

  async function open(o: Parameters<typeof launchChromium>[0] = {}) {
    const b = await launchChromium(o);
    browsers.push(b);
    b.context.setDefaultTimeout(15_000);
    const page = await b.context.newPage();
    // A refused form answers 400 with the form again; Chromium logs that.
    watchPage(page, h.url(''), problems, { expectedErrors: statusLine(400) });
    return { ...b, page };
  }

  async function signIn(page: Page, role: Role) {
    const email = `${role}.${Math.random().toString(36).slice(2, 8)}@acme.example`;
    const link = await createUserLink(h, { email, workspaceId, role, by: 'test' });
    await page.goto(h.url(new URL(link.url).pathname));
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }

  const look = (page: Page, t: { diagnostic(m: string): void }, name: string, audit = true) =>
    shots.look(page, t, name, { audit });

  const row = async () => (await findWorkspace(h.db.kysely, workspaceId))!;
  /** The natural size of the page's current logo image, once it has loaded (0×0: it did not decode). */
  const logoSize = (page: Page) =>
    page.locator('img.logo-preview').evaluate(async (img: HTMLImageElement) => {
      await img.decode().catch(() => undefined);
      return [img.naturalWidth, img.naturalHeight];
    });

  test('without JavaScript: name, reply-to, a dark colour and a logo upload; an SVG refused', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
    const { page } = await open({ javaScriptEnabled: false });
    await signIn(page, 'owner');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Workspace', level: 2 }).waitFor();
    assert.equal(await page.locator('#brand-color-pick').isVisible(), false, 'no picker without script');
    await look(page, t, 'face-nojs-empty', false);

    await page.getByLabel('Display name').fill('Acme Face Ltd');
    await page.getByLabel('Reply-to address').fill('contracts@acme.example');
    await page.getByLabel('Accent colour', { exact: true }).fill('#ffe066');
    await workspaceSection(page).getByRole('button', { name: 'Save' }).click();
    const refused = await page.locator('#brand-color-error').innerText();
    assert.match(refused, /^Accent colour #ffe066 has a contrast of only 1\.\d\d:1 .*at least 4\.5:1 is needed/);
    assert.equal(await page.locator('#brand-color').getAttribute('aria-invalid'), 'true');
    assert.equal((await row()).brand_color ?? null, null, 'nothing saved');
    await look(page, t, 'face-nojs-colour-refused', false);

    await page.getByLabel('Accent colour', { exact: true }).fill('#0b3d2e');
    await workspaceSection(page).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Workspace settings saved.').waitFor();
    const saved = await row();
    assert.deepEqual(
      [saved.name, saved.reply_to, saved.brand_color],
      ['Acme Face Ltd', 'contracts@acme.example', '#0b3d2e'],
    );

    await page.getByLabel('Logo file').setInputFiles(file('acme.png', LOGO));
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.getByRole('status').getByText('Logo saved.').waitFor();
    await page.getByRole('img', { name: 'Current logo of Acme Face Ltd' }).waitFor();
    assert.equal((await row()).logo_type, 'image/png');
    await page.getByRole('button', { name: 'Remove logo' }).waitFor();
    await look(page, t, 'face-nojs-logo-saved', false);

    await page.getByLabel('Logo file').setInputFiles(file('evil.svg', SVG));
    await page.getByRole('button', { name: 'Upload logo' }).click();
    assert.equal(
      await page.locator('#logo-error').innerText(),
      'This file is in SVG format: only PNG or JPEG images are accepted as a logo.',
    );
    await page.getByLabel('Logo file').setInputFiles(file('anim.gif', GIF));
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.locator('#logo-error').getByText('This file is in GIF format').waitFor();
    await page.getByLabel('Logo file').setInputFiles(
      file(
        'wide.png',
        makePng(4000, 2, () => [0, 0, 0, 255]),
      ),
    );
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.locator('#logo-error').getByText('The logo is 4000×2 pixels; at most 1000×1000 pixels').waitFor();
    assert.equal((await row()).logo_type, 'image/png', 'the PNG stays');
    await look(page, t, 'face-nojs-logo-refused', false);

    // The default language: a plain <select> ("English (default)" first, then each language in its own name).
    const language = page.getByLabel('Default language');
    assert.equal(await language.inputValue(), '', 'none set: English (default)');
    assert.equal(await language.locator('option').count(), 12);
    await language.selectOption({ label: 'Deutsch' });
    await languageSection(page).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Language saved.').waitFor();
    assert.equal((await row()).default_locale, 'de');
    assert.equal(await page.getByLabel('Default language').inputValue(), 'de');
    assert.equal(await page.locator('#language-now').innerText(), 'Now: Deutsch.');
    await languageSection(page).screenshot({
      path: shots.next('language-nojs'),
    });
  });

  test('with JavaScript: the logo decodes, the picker fills the field, axe is clean; a member only reads', async (t) => {
    const { page } = await open();
    await signIn(page, 'admin');
    await page.goto(h.url('/dashboard/settings'));
    assert.deepEqual(await logoSize(page), [300, 80], 'the PNG logo decodes');
    assert.equal(await page.locator('#brand-color-pick').isVisible(), true, 'the picker with script');
    assert.equal(await page.locator('#brand-color-pick').inputValue(), '#0b3d2e');
    await look(page, t, 'face-admin');

    await page.locator('#brand-color-pick').evaluate((el: HTMLInputElement) => {
      el.value = '#1a3fa8';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    assert.equal(
      await page.getByLabel('Accent colour', { exact: true }).inputValue(),
      '#1a3fa8',
      'the picker fills the field',
    );
    await workspaceSection(page).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Workspace settings saved.').waitFor();
    assert.equal((await row()).brand_color, '#1a3fa8');

    await page
      .getByLabel('Logo file')
      .setInputFiles(file('acme.jpg', makeJpeg(160, 48, { comment: 'made by a test' })));
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.getByRole('status').getByText('Logo saved.').waitFor();
    assert.equal((await row()).logo_type, 'image/jpeg');
    assert.deepEqual(await logoSize(page), [160, 48], 'the JPEG logo decodes');
    await look(page, t, 'face-admin-jpeg');

    const member = await open();
    await signIn(member.page, 'member');
    await member.page.goto(h.url('/dashboard/settings'));
    await member.page.getByText('contracts@acme.example').waitFor();
    assert.equal(await member.page.getByRole('button', { name: 'Upload logo' }).count(), 0, 'no upload form');
    assert.equal(await member.page.getByLabel('Display name').count(), 0, 'no name field');
    assert.deepEqual(await logoSize(member.page), [160, 48]);
    assert.equal(await member.page.locator('#language-now').innerText(), 'Now: Deutsch.');
    assert.equal(await member.page.getByLabel('Default language').count(), 0, 'no language form');
    await look(member.page, t, 'face-member');

    await page.context().setExtraHTTPHeaders({ 'accept-language': 'ar' });
    await page.goto(h.url('/dashboard/settings'));
    await page.getByRole('heading', { name: 'مساحة العمل', level: 2 }).waitFor();
    await look(page, t, 'face-admin-ar');

    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
