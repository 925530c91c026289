// The Settings page in Debian's Chromium, used as a person uses it: an owner opens it from the menu, turns the
// workspace's default reminders on (after 3, every 2 days), saves and sees the confirmation and the policy now in
// force; types an out-of-bounds value and sees the error beside that field, nothing saved. The same in Arabic (right to
// left), with JavaScript off (a plain form), as a member (read-only), and on a 360 px phone, where the eleven-link menu
// must wrap rather than widen the page. axe finds no serious or critical violation; screenshots go to a folder.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { fill, strings } from '../i18n/i18n.js';
import { launchChromium, pageShots, skipWithoutChromium, statusLine, watchPage } from '../testing/browser.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { workspaceReminders } from '../workspaces/settings.service.js';
import { createUserLink } from './people.service.js';
import type { Role } from './people.repo.js';
import { PASSWORD } from './testing/client.js';

const shots = pageShots('settings');
const NOW_OFF = 'Now: no automatic reminders.';
// The page has a form per setting, each with its own Save: these steps use the reminders' one.
const reminders = (page: Page) => page.locator('section[aria-labelledby="reminders-title"]');
const now = (after: number, every: number) =>
  `Now: the first reminder ${after} days after the invitation, then every ${every} days.`;

describe('dashboard settings in Chromium', { skip: skipWithoutChromium }, () => {
  let h: Harness;
  let workspaceId: string;
  const browsers: Awaited<ReturnType<typeof launchChromium>>[] = [];
  const problems: string[] = [];

  before(async () => {
    h = await startHarness({ start: Date.now() });
    workspaceId = (await h.workspace('business', 'Acme Settings')).id;
  });
  after(async () => {
    for (const b of browsers) await b.close();
    await h?.close();
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

  /** A new person with `role`: sets a password from the link, signs in, lands on Overview (English labels). */
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

  /** The field's error: named by its aria-describedby, marked invalid, and inside the field's own box of the form. */
  async function fieldError(page: Page, id: string) {
    const field = page.locator(`#${id}`);
    await page.locator(`#${id}[aria-invalid="true"]`).waitFor(); // the refused form's page has loaded
    const described = await field.getAttribute('aria-describedby');
    assert.ok(described, `${id} names its error`);
    const error = page.locator(`#${described}`);
    const [f, e] = [await field.boundingBox(), await error.boundingBox()];
    assert.ok(f && e, 'both are shown');
    assert.ok(e.y >= f.y + f.height && e.y - (f.y + f.height) < 40, `the error is just below ${id}: ${f.y}/${e.y}`);
    assert.ok(e.x < f.x + f.width && e.x + e.width > f.x, `the error is in ${id}'s column`);
    return (await error.innerText()).trim();
  }

  const saved = () => workspaceReminders(h.db, workspaceId);

  test('owner: from the menu, turn on, save, the policy shown; out of bounds refused beside the field', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
    const { page, context } = await open();
    await signIn(page, 'owner');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    await page.getByText(NOW_OFF).waitFor();
    await look(page, t, 'settings-en');

    await page.getByRole('switch', { name: 'Send automatic reminders' }).check();
    await page.getByLabel('First reminder after (days)').fill('3');
    await page.getByLabel('Then every (days)').fill('2');
    await reminders(page).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Reminder settings saved.').waitFor();
    await page.getByText(now(3, 2)).waitFor();
    assert.equal(await page.getByRole('switch', { name: 'Send automatic reminders' }).isChecked(), true);
    assert.equal(await page.getByLabel('First reminder after (days)').inputValue(), '3');
    assert.equal(await page.getByLabel('Then every (days)').inputValue(), '2');
    assert.deepEqual(await saved(), { after_days: 3, every_days: 2 });
    await look(page, t, 'settings-saved-en');

    // Out of bounds: the page's own message beside the field (not the browser's bubble), nothing saved.
    await page.getByLabel('Then every (days)').fill('31');
    await reminders(page).getByRole('button', { name: 'Save' }).click();
    assert.equal(await fieldError(page, 'every-days'), 'Repeat: enter whole days from 1 to 30.');
    assert.equal(await page.locator('#after-days').getAttribute('aria-invalid'), null, 'the other field is fine');
    assert.equal(await page.getByLabel('Then every (days)').inputValue(), '31', 'what was typed stays');
    await page.getByText(now(3, 2)).waitFor();
    assert.deepEqual(await saved(), { after_days: 3, every_days: 2 }, 'nothing saved');
    await look(page, t, 'settings-refused-en');
    await page.getByLabel('First reminder after (days)').fill('0');
    await page.getByLabel('Then every (days)').fill('2');
    await reminders(page).getByRole('button', { name: 'Save' }).click();
    assert.equal(await fieldError(page, 'after-days'), 'First reminder: enter whole days from 1 to 60.');
    assert.deepEqual(await saved(), { after_days: 3, every_days: 2 }, 'nothing saved');

    // Arabic, right to left: the dashboard follows Accept-Language.
    await context.setExtraHTTPHeaders({ 'accept-language': 'ar' });
    await page.goto(h.url('/dashboard/settings'));
    assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    await page.getByRole('heading', { name: 'الإعدادات', level: 1 }).waitFor();
    await page.getByText(fill(strings('ar', 'dashboard')['settings.current'], { after: 3, every: 2 })).waitFor();
    await look(page, t, 'settings-ar');
    await page.getByLabel('ثم كل (أيام)').fill('0');
    await reminders(page).getByRole('button', { name: 'حفظ' }).click();
    assert.equal(await fieldError(page, 'every-days'), 'التكرار: أدخل عددًا صحيحًا من الأيام من 1 إلى 30.');
    await look(page, t, 'settings-refused-ar');
    assert.deepEqual(await saved(), { after_days: 3, every_days: 2 }, 'nothing saved');
  });

  test('without JavaScript the form works; a member sees the policy and no form', async (t) => {
    const owner = await open({ javaScriptEnabled: false });
    await signIn(owner.page, 'owner');
    await owner.page.getByRole('link', { name: 'Settings' }).click();
    await owner.page.getByLabel('First reminder after (days)').fill('99');
    await reminders(owner.page).getByRole('button', { name: 'Save' }).click();
    assert.equal(await fieldError(owner.page, 'after-days'), 'First reminder: enter whole days from 1 to 60.');
    await owner.page.getByLabel('First reminder after (days)').fill('5');
    await owner.page.getByLabel('Then every (days)').fill('7');
    await reminders(owner.page).getByRole('button', { name: 'Save' }).click();
    await owner.page.getByText('Reminder settings saved.').waitFor();
    await owner.page.getByText(now(5, 7)).waitFor();
    assert.deepEqual(await saved(), { after_days: 5, every_days: 7 });
    await look(owner.page, t, 'settings-nojs-saved', false); // the same markup is audited with JavaScript on
    await owner.page.getByRole('switch', { name: 'Send automatic reminders' }).uncheck();
    await reminders(owner.page).getByRole('button', { name: 'Save' }).click();
    await owner.page.getByText(NOW_OFF).waitFor();
    assert.equal(await saved(), null, 'unchecked turns them off');
    // Off keeps no day counts: on again starts from the suggested 3 and 2.
    assert.equal(await owner.page.getByLabel('First reminder after (days)').inputValue(), '3');
    await owner.page.getByRole('switch', { name: 'Send automatic reminders' }).check();
    await owner.page.getByLabel('First reminder after (days)').fill('5');
    await owner.page.getByLabel('Then every (days)').fill('7');
    await reminders(owner.page).getByRole('button', { name: 'Save' }).click();
    await owner.page.getByText(now(5, 7)).waitFor();

    const member = await open();
    await signIn(member.page, 'member');
    await member.page.getByRole('link', { name: 'Settings' }).click();
    await member.page.getByText(now(5, 7)).waitFor();
    await member.page.getByText('Only owners and admins can change settings.').waitFor();
    assert.equal(await member.page.getByRole('button', { name: 'Save' }).count(), 0, 'no Save button');
    assert.equal(await member.page.getByRole('switch').count(), 0, 'no switch');
    assert.equal(await member.page.getByRole('spinbutton').count(), 0, 'no day fields');
    await look(member.page, t, 'settings-member');
  });

  test('a 360 px phone: the eleven-link menu wraps, the page never scrolls sideways (en and ar)', async (t) => {
    const { page, context } = await open({ phone: true });
    await signIn(page, 'owner');
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link').count(), 12, 'the brand and eleven links');
    for (const lang of ['en', 'ar']) {
      await context.setExtraHTTPHeaders({ 'accept-language': lang });
      await page.goto(h.url('/dashboard/settings'));
      await page.locator('#reminders-now').waitFor();
      const width = await page.evaluate(() => document.scrollingElement!.scrollWidth);
      assert.ok(width <= 360, `${lang}: the page is ${width} px wide`);
      for (const link of await nav.getByRole('link').all()) {
        const box = await link.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `${lang}: ${await link.innerText()} on screen`);
      }
      await look(page, t, `settings-360-${lang}`);
    }
    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
