// Every script, end to end, on SQLite and PostgreSQL: a request (locale de) whose title, signers' names, typed
// signatures and field values are Latin, Cyrillic, Greek, Chinese, Japanese, Korean, Arabic, Hebrew and Devanagari
// is signed in Chromium by each signer; the sealed PDF's text (pdftotext, as a reader or a search would get it)
// holds each of those strings exactly, no "?" and no anchor marker, pdfsig, qpdf and openssl accept its B-LTA seal,
// and its pages are kept as PNGs to look at.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { assertPadesLta } from '../documents/pdf/testing/pades.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { strings } from '../i18n/i18n.js';
import { launchChromium, skipWithoutChromium } from '../testing/browser.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { localCaPem } from './testing/complete.js';

const databases = await bothDatabases();

const TITLE = 'Договор 合同 agreement';
const SIGNERS = [
  { role: 's1', name: '王小明 Дмитрий Ünal', typed: '王小明 Дмитрий', value: 'Ελληνικά Ζωή' },
  { role: 's2', name: 'محمد علي', typed: 'سارة أحمد', value: 'שרה כהן' },
  { role: 's3', name: 'प्रिया शर्मा', typed: 'देवनागरी क्षत्रिय', value: '山田 太郎 ひらがな 김민준' },
];

// One signature and one text anchor per signer, each on its own line (the markers must vanish from the text), with
// room above for the signature box, which grows upwards from its marker.
const contract = () =>
  makePdf({
    text: [
      [
        'Contract between the parties',
        ...SIGNERS.flatMap((s) => ['', '', `Signature: {{signature:${s.role}}}`, `Note: {{text:${s.role}}}`]),
      ],
    ],
  });

/** pdftoppm pages at 100 dpi into `dir` (kept after the run, for people to look at). */
const pngPages = (pdf: string, dir: string) =>
  execFileSync('pdftoppm', ['-r', '100', '-png', pdf, path.join(dir, 'p')]);

for (const d of databases) {
  describe(`every script in the sealed PDF (${d.name})`, { skip: d.skip || skipWithoutChromium }, () => {
    let e: E2E;
    let browser: Awaited<ReturnType<typeof launchChromium>>;
    before(async () => {
      e = await startE2E({ database: d.database });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await e?.close();
    });

    test('signed in Chromium; pdftotext holds every string, no "?" and no marker', { timeout: 180_000 }, async (t) => {
      const created = await e.api('POST', '/v1/signing-requests', {
        title: TITLE,
        locale: 'de',
        placement: 'anchors',
        file: { name: 'contract.pdf', content_base64: b64(await contract()) },
        signers: SIGNERS.map((s) => ({ role: s.role, name: s.name, email: `${s.role}@example.com` })),
      });
      assert.equal(created.status, 201, created.text);
      const documentId: string = created.json.document_id;
      await e.work();

      const problems: string[] = [];
      for (const s of SIGNERS) {
        const page = await browser.context.newPage();
        page.on('pageerror', (err) => problems.push(`${s.role}: ${err.message}`));
        await page.goto(e.h.url(`/sign/${await e.linkFor(`${s.role}@example.com`)}`));
        await page.locator('[data-page="1"].rendered').waitFor({ timeout: 20_000 });
        const inputs = page.locator('#fields-box [data-field]');
        assert.equal(await inputs.count(), 1, `${s.role}: one text field to fill`);
        await inputs.first().fill(s.value);
        await page.locator('#signature-typed').fill(s.typed);
        await page.locator('#sign-button:not([disabled])').waitFor({ timeout: 5000 });
        await page.locator('#sign-button').click();
        await page.locator('#status[data-state="signed"]').waitFor({ timeout: 15_000 });
        await page.close();
      }
      assert.deepEqual(problems, []);
      await e.work();

      const res = await fetch(e.h.url(`/v1/documents/${documentId}/signed`), {
        headers: { authorization: `Bearer ${e.token}` },
      });
      assert.equal(res.status, 200, await res.clone().text());
      const sealed = new Uint8Array(await res.arrayBuffer());
      const tools = await pdfScratch('signet-scripts-');
      t.after(() => tools.cleanup());
      const shots = fs.mkdtempSync(path.join(os.tmpdir(), `signet-scripts-${d.name}-`));
      pngPages(tools.save(sealed, 'sealed.pdf'), shots);
      t.diagnostic(`sealed pages: ${shots}`);

      // The legal record, judged by tools nobody here wrote: pdfsig, qpdf and openssl on the B-LTA seal.
      const [completed] = e.eventsOf('document.completed', documentId);
      assert.ok(completed, 'document.completed was not delivered');
      assertPadesLta(tools, sealed, await localCaPem(e), completed.tsa_signed_at);

      const pages = tools.pdfText(sealed).split('\f');
      const stamped = pages[0]!;
      const certificate = pages.slice(1).join('\n');
      for (const s of SIGNERS) {
        assert.ok(stamped.includes(s.typed), `page 1 lacks the typed signature "${s.typed}":\n${stamped}`);
        assert.ok(stamped.includes(s.value), `page 1 lacks the field value "${s.value}":\n${stamped}`);
        assert.ok(certificate.includes(s.name), `the audit certificate lacks "${s.name}":\n${certificate}`);
      }
      assert.ok(certificate.includes(TITLE), `the audit certificate lacks the title:\n${certificate}`);
      const de = strings('de', 'audit');
      for (const word of [de.title, de.documentTitle, de.documentId])
        assert.ok(certificate.includes(word), `the certificate is not in German ("${word}" missing)`);
      assert.ok(!pages.join('').includes('?'), `a "?" appeared in the sealed text`);
      assert.doesNotMatch(pages.join(''), /\{\{|\}\}/, 'an anchor marker is still in the text');
      assert.match(stamped, /Signature:/, 'the words beside the markers are kept');
    });
  });
}
