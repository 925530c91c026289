// The signer page's typed fields in Debian's Chromium: a template recipient with a text, number, date (filled through
// the date input), checkbox, select and e-mail field. Signing with everything empty shows an error next to each
// required input (aria-describedby) and sends nothing; a wrong e-mail is refused next to its field; filled in, the
// signature goes through and the audit trail holds the values. Screenshots go to a folder named in the diagnostics.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { axe, CHROMIUM, launchChromium, skipWithoutChromium } from '../../testing/browser.js';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { startSmtpPeer } from '../../mail/testing/smtp-peer.js';
import { startHarness } from '../../testing/harness.js';

const at = (row: number) => ({ page: 1, box: { x: 72, y: 120 + row * 36, width: 200, height: 22 } });
const FIELDS = [
  { key: 'company', type: 'text', slot: 'client', required: true, label: 'Company', max_length: 40, ...at(0) },
  { key: 'seats', type: 'number', slot: 'client', required: true, label: 'Seats', min: 1, max: 50, ...at(1) },
  { key: 'start', type: 'date', slot: 'client', required: true, label: 'Start date', ...at(2) },
  { key: 'agree', type: 'checkbox', slot: 'client', required: true, label: 'I accept the terms', ...at(3) },
  { key: 'plan', type: 'enum', slot: 'client', required: true, label: 'Plan', options: ['basic', 'pro'], ...at(4) },
  { key: 'contact', type: 'email', slot: 'client', label: 'Billing e-mail', ...at(5) },
  { key: 'sig', type: 'signature', slot: 'client', page: 1, box: { x: 72, y: 400, width: 200, height: 40 } },
];

test(
  'typed fields in Chromium: errors beside each input, then every type filled and signed',
  { skip: skipWithoutChromium, timeout: 90_000 },
  async (t) => {
    assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
    const shots = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-fields-shots-'));
    t.diagnostic(`screenshots in ${shots}`);
    const smtp = await startSmtpPeer();
    t.after(() => smtp.close());
    const h = await startHarness({ env: { SMTP_URL: smtp.url } });
    t.after(() => h.close());
    const browser = await launchChromium();
    t.after(() => browser.close());
    const { token } = await h.tenant('enterprise');

    const pdf = await makePdf({ text: [['Order form', 'Please complete the fields below and sign.']] });
    const tpl = await h.request('POST', '/v1/templates', {
      token,
      body: {
        name: 'Order form',
        file: { name: 'order.pdf', content_base64: Buffer.from(pdf).toString('base64') },
        slots: [{ name: 'client' }],
        fields: FIELDS,
      },
    });
    assert.equal(tpl.status, 201, tpl.text);
    const ti = await h.request('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
      token,
      body: { recipients: [{ slot: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }] },
    });
    assert.equal(ti.status, 201, ti.text);
    await h.work();
    const mail = (await smtp.parsed()).find((m) => /\/sign\/[A-Za-z0-9_-]{43}/.test(m.text ?? ''));
    const link = /\/sign\/[A-Za-z0-9_-]{43}/.exec(mail?.text ?? '')?.[0];
    assert.ok(link, 'no invitation with a signing link');

    const problems: string[] = [];
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/sign')) posts.push(r.postData() ?? '');
    });
    await page.goto(h.url(link));
    await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });

    // Six inputs of their own kinds, labelled, with the overlay boxes over the PDF.
    const ids = await page.$$eval('[data-input-for]', (rows) => rows.map((r) => (r as HTMLElement).dataset.inputFor!));
    assert.equal(ids.length, 6, `inputs: ${ids.join(', ')}`);
    const input = (i: number) => page.locator(`#field-${ids[i]}`);
    assert.equal(await input(1).getAttribute('type'), 'number');
    assert.equal(await input(2).getAttribute('type'), 'date');
    assert.equal(await input(3).getAttribute('type'), 'checkbox');
    assert.equal(await input(4).evaluate((e) => e.tagName), 'SELECT');
    assert.equal(await input(5).getAttribute('type'), 'email');
    assert.equal(await page.locator('#sign-form').getByLabel('Company').count(), 1, 'the label names its input');
    assert.equal(
      await page.locator('.field-checkbox[data-field-id]').count(),
      1,
      'the checkbox has its box on the PDF',
    );

    await page.locator('#signature-typed').fill('Ada Lovelace');
    await page.locator('#sign-button').click();
    for (const i of [0, 1, 2, 3, 4]) {
      assert.equal(await input(i).getAttribute('aria-invalid'), 'true', `input ${i} not marked`);
      const described = await input(i).getAttribute('aria-describedby');
      const text = await page.locator(`#${described}`).textContent();
      assert.ok(text && text.length > 3, `no error next to input ${i}`);
    }
    assert.equal(await input(5).getAttribute('aria-invalid'), null, 'an optional empty field is fine');
    assert.equal(posts.length, 0, 'nothing is sent while a required field is empty');
    await page.screenshot({ path: path.join(shots, '1-required-errors.png'), fullPage: true });

    await input(0).fill('Analytical Engines Ltd');
    await input(1).fill('12');
    await input(2).fill('2026-03-01');
    await input(3).check();
    await input(4).selectOption('pro');
    await input(5).fill('not-an-address');
    await page.locator('#sign-button').click();
    assert.match((await page.locator(`#field-${ids[5]}-error`).textContent()) ?? '', /e-mail/i);
    assert.equal(posts.length, 0, 'a bad e-mail is caught before sending');
    await input(5).fill('billing@example.com');
    await page.locator('[data-page="1"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots, '2-filled.png'), fullPage: true });
    const violations = await axe(page, t, 'fields filled');
    assert.deepEqual(violations, [], 'serious axe violations');

    await page.locator('#sign-button').click();
    await page.locator('body[data-state="signed"]').waitFor({ timeout: 15_000 });
    assert.deepEqual(JSON.parse(posts[0]!).fields, {
      [ids[0]!]: 'Analytical Engines Ltd',
      [ids[1]!]: 12,
      [ids[2]!]: '2026-03-01',
      [ids[3]!]: true,
      [ids[4]!]: 'pro',
      [ids[5]!]: 'billing@example.com',
    });
    await h.work();
    const trail = await h.request('GET', `/v1/documents/${ti.json.template_instance.document_id}/audit-trail`, {
      token,
    });
    const signed = trail.json.entries.find((x: { action: string }) => x.action === 'signing_request.signed');
    assert.deepEqual(
      signed.detail.fields.map((f: { value: unknown }) => f.value),
      ['Analytical Engines Ltd', 12, '2026-03-01', true, 'pro', 'billing@example.com'],
    );
    assert.deepEqual(problems, []);
  },
);
