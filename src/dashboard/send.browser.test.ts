// Sending from the dashboard in Debian's Chromium, the way a person works: upload a two-page PDF, name two signers,
// drag a signature and a date field for each onto page 2, resize one with the mouse, move one with the keyboard,
// reload (the draft comes back as it was), send. The signers' invitations arrive, each signs, the document seals,
// and the stamps are where the fields were dropped: the boxes the API gives the signers equal the placed boxes
// within 1 point, and in the sealed PDF (pdftotext -bbox) each signer's name lies inside their signature box. Then
// the keyboard alone (an overlap flagged on the box and in the summary holds Send), the page without JavaScript (the
// table of fields) and a 360 px phone by touch. axe finds no serious violation on the send page and the editor;
// screenshots of each step go to /tmp/signet-send-shots-*.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { axe, launchChromium, pageShots, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

const shots = pageShots('send');
type Box = { page: number; x: number; y: number; width: number; height: number; type?: string; signer?: number };
const hasPdftotext = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('sending from the dashboard in Chromium', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    e = await startE2E({ tier: 'business' });
    browser = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, e.h.url(''), problems);
  });
  after(async () => {
    await browser?.close();
    await e?.close();
  });

  async function signIn(p: Page, who: string) {
    const link = await createUserLink(e.h, { email: who, workspaceId: e.workspaceId, role: 'member', by: 'test' });
    await p.goto(e.h.url(new URL(link.url).pathname));
    await p.getByLabel('New password').fill(PASSWORD);
    await p.getByLabel('Repeat it').fill(PASSWORD);
    await p.getByRole('button', { name: 'Set password' }).click();
    await p.getByLabel('E-mail').fill(who);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
  }
  /** Uploads a one-page PDF with one signer from the send page; the draft page is open after. */
  async function uploadDraft(p: Page, title: string) {
    await p.goto(e.h.url('/dashboard/send'));
    const pdf = await makePdf({ pages: 1, text: [[title]] });
    await p
      .getByLabel('PDF file')
      .setInputFiles({ name: 'one.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) });
    await p.getByLabel('Title').fill(title);
    await p.locator('#signers-0-name').fill('Ada Lovelace');
    await p.locator('#signers-0-email').fill('ada@client.example');
    await p.getByRole('button', { name: 'Upload and place the fields' }).click();
    await p.waitForURL(/\/dashboard\/send\/drf_/);
  }

  const snap = (name: string) => page.screenshot({ path: shots.next(name), fullPage: false });

  /** Drags the palette's `type` button onto page `num` at (fx, fy), fractions of the page's width and height. */
  async function drop(type: string, num: number, fx: number, fy: number) {
    const target = page.locator(`.fe-layer[data-page="${num}"]`);
    await target.scrollIntoViewIfNeeded();
    const button = page.locator(`.fe-type[data-type="${type}"]`);
    const from = (await button.boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    const to = (await target.boundingBox())!;
    await page.mouse.move(to.x + to.width * fx, to.y + to.height * fy, { steps: 12 });
    await page.mouse.up();
  }
  const placed = () => page.evaluate(() => document.querySelectorAll('.fe-field').length);
  /** The draft's fields once the autosave has stored what `ready` expects (polled: saves are debounced). */
  async function savedFields(ready: (f: Box[]) => boolean): Promise<Box[]> {
    for (let i = 0; i < 100; i++) {
      const row = await e.h.db.kysely.selectFrom('dashboard_drafts').select('fields').executeTakeFirst();
      const fields = row ? (JSON.parse(row.fields) as Box[]) : [];
      if (ready(fields)) return fields;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail('the autosave did not store the change within 10 s');
  }

  test('upload, two signers, drag, resize, keyboard, reload, send; each signs; the stamps land where placed', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
    const serious: string[] = [];
    const [ana, li] = ['ana.perez@client.example', 'li.lei@vendor.example'];

    await signIn(page, 'sender@acme.example');
    await page.getByRole('link', { name: 'Send a document' }).click();
    await page.getByRole('heading', { name: 'Send a document', level: 1 }).waitFor();
    serious.push(...(await axe(page, t, 'send page')));
    await snap('send-page');

    const pdf = await makePdf({ pages: 2, text: [['Master services agreement'], ['Signatures']] });
    await page
      .getByLabel('PDF file')
      .setInputFiles({ name: 'msa.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) });
    await page.getByLabel('Title').fill('Master services agreement');
    await page.locator('#signers-0-name').fill('Ana Pérez');
    await page.locator('#signers-0-email').fill(ana);
    await snap('send-filled');
    await page.getByRole('button', { name: 'Upload and place the fields' }).click();
    await page.waitForURL(/\/dashboard\/send\/drf_/);
    await page.locator('body[data-editor="ready"]').waitFor();

    // The second signer in the spare row; the editor's parties follow.
    await page.locator('#signers-1-name').fill('Li Lei');
    await page.locator('#signers-1-email').fill(li);
    await page.locator('#fe-party option', { hasText: 'Li Lei' }).waitFor({ state: 'attached' });
    await page.locator('.fe-layer[data-page="1"]').waitFor();
    serious.push(...(await axe(page, t, 'editor')));
    await snap('editor');

    // Ana's signature and date, then Li's, all on page 2.
    await page.locator('#fe-party').selectOption({ label: 'Ana Pérez' });
    await drop('signature', 2, 0.1, 0.7);
    await drop('date', 2, 0.55, 0.7);
    await page.locator('#fe-party').selectOption({ label: 'Li Lei' });
    await drop('signature', 2, 0.1, 0.82);
    await drop('date', 2, 0.55, 0.82);
    assert.equal(await placed(), 4, 'four fields placed');
    await snap('dropped');

    // Resize Li's signature with the mouse (its handle), 30 CSS pixels wider and 10 taller.
    const handle = page.locator('.fe-field[data-index="2"] .fe-handle');
    const hb = (await handle.boundingBox())!;
    const dropped = await savedFields((f) => f.length === 4);
    await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
    await page.mouse.down();
    await page.mouse.move(hb.x + hb.width / 2 + 30, hb.y + hb.height / 2 + 10, { steps: 6 });
    await page.mouse.up();
    const afterResize = await savedFields((f) => f[2]!.width !== dropped[2]!.width);
    assert.ok(afterResize[2]!.width > 150 + 10, `resized wider: ${afterResize[2]!.width}`);
    assert.ok(afterResize[2]!.height > 40 + 3, `and taller: ${afterResize[2]!.height}`);

    // Move Ana's date with the keyboard alone: focus, three right, Shift+down (10 pt).
    await page.locator('.fe-field[data-index="1"]').focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Shift+ArrowDown');
    const moved = await savedFields((f) => f[1]!.y === afterResize[1]!.y + 10);
    assert.equal(moved[1]!.x, afterResize[1]!.x + 3, 'three points right');
    assert.equal(moved[1]!.y, afterResize[1]!.y + 10, 'ten points down');
    await snap('moved');
    assert.equal(
      await page.locator('#fe-problems').textContent(),
      'No problems: every field is on its page and none overlap.',
    );

    // A reload restores the draft: both signers, four fields.
    await page.reload();
    await page.locator('body[data-editor="ready"]').waitFor();
    assert.equal(await page.locator('#signers-1-email').inputValue(), li);
    await page.locator('.fe-field').nth(3).waitFor({ state: 'attached' });
    const boxes = moved.map((f) => ({ ...f }));
    assert.deepEqual(
      boxes.map((f) => [f.type, f.signer, f.page]),
      [
        ['signature', 0, 2],
        ['date', 0, 2],
        ['signature', 1, 2],
        ['date', 1, 2],
      ],
    );
    await snap('reloaded');

    await page.getByRole('button', { name: 'Send for signing' }).click();
    await page.waitForURL(/\/dashboard\/documents\/doc_[0-9a-f]+\?done=sent/);
    await page.getByText('The document was sent to its signers.').waitFor();
    await snap('sent');
    const documentId = /doc_[0-9a-f]+/.exec(page.url())![0];

    // The invitations arrive; the API's boxes equal the placed ones (within 1 pt); each signs.
    await e.work();
    const people: [string, string, Box[]][] = [
      [ana, 'Ana Pérez', boxes.filter((b) => b.signer === 0)],
      [li, 'Li Lei', boxes.filter((b) => b.signer === 1)],
    ];
    for (const [address, name, mine] of people) {
      const token = await e.linkFor(address);
      const info = await e.h.request('GET', `/sign/${token}/info`);
      assert.equal(info.status, 200, info.text);
      const api = info.json.fields as Box[];
      assert.equal(api.length, mine.length, `${name}: fields`);
      for (const [i, b] of mine.entries())
        for (const k of ['page', 'x', 'y', 'width', 'height'] as const)
          assert.ok(Math.abs(api[i]![k] - b[k]) <= 1, `${name} field ${i} ${k}: API ${api[i]![k]}, placed ${b[k]}`);
      assert.equal((await e.h.request('POST', `/sign/${token}/view`)).status, 200);
      const signed = await e.h.request('POST', `/sign/${token}/sign`, {
        body: { signature: { type: 'typed', text: name } },
      });
      assert.equal(signed.status, 200, signed.text);
    }
    await e.work();
    const doc = await e.api('GET', `/v1/documents/${documentId}`);
    assert.equal(doc.json.status, 'completed', 'sealed');
    const audit = await e.h.db.kysely
      .selectFrom('audit_events')
      .select('actor')
      .where('document_id', '=', documentId)
      .where('action', '=', 'signing_request.sent')
      .execute();
    assert.deepEqual(
      audit.map((a) => a.actor),
      ['user:sender@acme.example', 'user:sender@acme.example'],
    );

    if (hasPdftotext) {
      const raw = await e.h.app.inject({
        method: 'GET',
        url: `/v1/documents/${documentId}/signed`,
        headers: { authorization: `Bearer ${e.token}` },
      });
      const file = path.join(shots.dir, 'sealed.pdf');
      fs.writeFileSync(file, raw.rawPayload);
      const html = execFileSync('pdftotext', ['-bbox', '-f', '2', '-l', '2', file, '-'], { encoding: 'utf8' });
      const words = [
        ...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g),
      ].map((m) => ({ x0: +m[1]!, y0: +m[2]!, x1: +m[3]!, y1: +m[4]!, text: m[5]! }));
      const inside = (w: (typeof words)[number], b: Box) =>
        w.x0 >= b.x - 1 && w.x1 <= b.x + b.width + 1 && w.y0 >= b.y - 1 && w.y1 <= b.y + b.height + 1;
      for (const [, name, mine] of people) {
        const first = name.split(' ')[0]!;
        const sig = mine.find((b) => b.type === 'signature')!;
        const hit = words.find((w) => w.text === first);
        assert.ok(hit, `"${first}" is on page 2 of the sealed PDF`);
        assert.ok(inside(hit, sig), `${first} ${JSON.stringify(hit)} inside its signature box ${JSON.stringify(sig)}`);
        const date = mine.find((b) => b.type === 'date')!;
        assert.ok(
          words.some((w) => inside(w, date)),
          `a date stamped inside ${JSON.stringify(date)}`,
        );
      }
    } else t.diagnostic('pdftotext missing: the sealed PDF text positions were not checked');

    assert.deepEqual(serious, [], 'no serious axe violation');
    assert.deepEqual(problems, [], 'no page errors, no third-party requests');
  });

  test('the keyboard alone: add fields, move one onto another, the overlap is flagged and Send waits', async (t) => {
    const own = await launchChromium();
    const page = await own.context.newPage();
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    try {
      await signIn(page, 'keys@acme.example');
      await uploadDraft(page, 'Keyboard only');
      await page.locator('body[data-editor="ready"]').waitFor();
      // Choose the type and add it twice with the button (Enter on each); the second lands where nothing is.
      await page.locator('.fe-type[data-type="initials"]').focus();
      await page.keyboard.press('Enter');
      await page.locator('#fe-add').focus();
      await page.keyboard.press('Enter');
      await page.locator('.fe-field[data-index="0"]').waitFor();
      await page.locator('#fe-add').focus();
      await page.keyboard.press('Enter');
      await page.locator('.fe-field[data-index="1"]').waitFor();
      assert.equal(
        await page.locator('#fe-problems').textContent(),
        'No problems: every field is on its page and none overlap.',
      );
      const saved = async () =>
        JSON.parse(
          (
            await e.h.db.kysely
              .selectFrom('dashboard_drafts')
              .select('fields')
              .where('form', 'like', '%Keyboard only%')
              .executeTakeFirstOrThrow()
          ).fields,
        ) as Box[];
      // The second field sits right of the first (x 108, the first spans 36 to 96): seven Shift+Left, 10 pt each,
      // bring it to x 38, onto the first.
      await page.locator('.fe-field[data-index="1"]').focus();
      for (let i = 0; i < 7; i++) await page.keyboard.press('Shift+ArrowLeft');
      await page.locator('.fe-field.bad').first().waitFor();
      assert.match((await page.locator('#fe-problems').textContent()) ?? '', /Field 1 overlaps field 2\./);
      assert.equal(await page.locator('#send-button').isDisabled(), true, 'Send waits');
      assert.equal(await page.locator('.fe-field[data-index="1"]').getAttribute('aria-invalid'), 'true');
      await page.screenshot({ path: shots.next('keyboard-overlap') });
      // Alt+Down makes it taller, Delete removes it; then no problem is left.
      await page.keyboard.press('Alt+ArrowDown');
      await page.keyboard.press('Delete');
      assert.equal(await page.locator('.fe-field').count(), 1);
      assert.equal(await page.locator('#send-button').isDisabled(), false, 'Send is back');
      for (let i = 0; i < 100 && (await saved()).length !== 1; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal((await saved()).length, 1, 'the removal is saved');
      const serious = await axe(page, t, 'editor with a field');
      assert.deepEqual(serious, [], 'no serious axe violation');
      assert.deepEqual(problems, [], 'no page errors');
    } finally {
      await own.close();
    }
  });

  test('without JavaScript: the table of fields, Save, reload', async () => {
    const off = await launchChromium({ javaScriptEnabled: false });
    try {
      const p = await off.context.newPage();
      await signIn(p, 'nojs@acme.example');
      await uploadDraft(p, 'No script');
      assert.equal(await p.locator('#editor').isVisible(), false, 'no editor without script');
      await p.locator('select[name="fields.0.type"]').selectOption('signature');
      await p.locator('input[name="fields.0.page"]').fill('1');
      await p.locator('input[name="fields.0.x"]').fill('72');
      await p.locator('input[name="fields.0.y"]').fill('500');
      await p.locator('input[name="fields.0.width"]').fill('180');
      await p.locator('input[name="fields.0.height"]').fill('40');
      await p.getByRole('button', { name: 'Save the draft' }).click();
      await p.getByText('The draft is saved.').waitFor();
      assert.equal(await p.locator('input[name="fields.0.y"]').inputValue(), '500');
      assert.equal(await p.locator('select[name="fields.0.type"]').inputValue(), 'signature');
      await p.screenshot({
        path: shots.next('no-script'),
        fullPage: true,
      });
      await p.getByRole('button', { name: 'Send for signing' }).click();
      await p.waitForURL(/\/dashboard\/documents\/doc_[0-9a-f]+\?done=sent/);
    } finally {
      await off.close();
    }
  });

  test('a phone, by touch: tap a type, add it, drag the field with a finger; the page never scrolls sideways', async (t) => {
    const phone = await launchChromium({ phone: true });
    try {
      const p = await phone.context.newPage();
      p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      await signIn(p, 'phone@acme.example');
      await uploadDraft(p, 'By touch');
      await p.locator('body[data-editor="ready"]').waitFor();
      await p.locator('.fe-type[data-type="signature"]').tap();
      await p.locator('#fe-add').tap();
      const field = p.locator('.fe-field[data-index="0"]');
      await field.waitFor();
      await field.scrollIntoViewIfNeeded();
      const fb = (await field.boundingBox())!;
      const scale = (await p.locator('.fe-layer[data-page="1"]').boundingBox())!.width / 612;
      // A finger drag through the DevTools protocol: Chromium turns the touches into pointer events.
      const cdp = await phone.context.newCDPSession(p);
      const at = (x: number, y: number) => [{ x, y, id: 1 }];
      const [x0, y0] = [fb.x + fb.width / 2, fb.y + fb.height / 2];
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(x0, y0) });
      for (let i = 1; i <= 8; i++)
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(x0 + i * 5, y0 + i * 10) });
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
      const expected = { x: 36 + Math.round(40 / scale), y: 36 + Math.round(80 / scale) };
      let fields: Box[] = [];
      for (let i = 0; i < 100; i++) {
        const row = await e.h.db.kysely
          .selectFrom('dashboard_drafts')
          .select('fields')
          .where('form', 'like', '%By touch%')
          .executeTakeFirstOrThrow();
        fields = JSON.parse(row.fields) as Box[];
        // Autosave may store a position from the middle of the drag first: wait for the last one (bounded).
        const f = fields[0];
        if (f && Math.abs(f.x - expected.x) <= 2 && Math.abs(f.y - expected.y) <= 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(Math.abs(fields[0]!.x - expected.x) <= 2, `moved right by the finger: ${fields[0]!.x} ~ ${expected.x}`);
      assert.ok(Math.abs(fields[0]!.y - expected.y) <= 2, `and down: ${fields[0]!.y} ~ ${expected.y}`);
      const wide = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(wide <= 1, `no sideways scroll (${wide} px)`);
      await p.screenshot({ path: shots.next('phone') });
      assert.deepEqual(await axe(p, t, 'editor on a phone'), [], 'no serious axe violation');
    } finally {
      await phone.close();
    }
  });
});
