import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makePdf, makePng } from './testing/fixtures.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testing', 'main-thread-child.ts');

type ChildReport = { out: Record<string, unknown>; loaded: string[]; control: string[] };

test('every engine operation runs in the real app with no PDF library loaded on its main thread', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'signet-pdf-main-'));
  try {
    await writeFile(
      path.join(dir, 'doc.pdf'),
      await makePdf({ text: [['{{signature:a}}', '{{text:a}}', 'Name: [[NAME]]']] }),
    );
    await writeFile(path.join(dir, 'sig.png'), makePng(120, 40));
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', CHILD, dir], { timeout: 120_000 }, (err, out, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out),
      ),
    );
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildReport;
    assert.deepEqual(report.out, {
      inspect: 1,
      preview: { anchors: 2, problems: 0 },
      prepare: ['signature', 'text'],
      placeTemplate: ['name'],
      stamp: true,
      appendAuditPage: true,
      auditCertificate: true,
      seal: true,
    });
    assert.deepEqual(report.loaded, [], 'scripts of a PDF library compiled on the main thread');
    // The probe sees them when they do load (the child loads them on purpose after the check).
    for (const lib of ['/node_modules/pdf-lib/', '/node_modules/@pdf-lib/fontkit/', '/node_modules/pdfjs-dist/']) {
      assert.ok(
        report.control.some((u) => u.includes(lib)),
        `${lib} not seen once loaded: ${report.control.join(', ')}`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
