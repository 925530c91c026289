import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../lib/errors.js';
import { findAnchors } from './anchors.js';
import { inspectPdf } from './ingest.js';
import { closePdfWorkers, PdfTaskTimeout, runPdfTask } from './pool.js';
import { makePdf } from './testing/fixtures.js';

after(() => closePdfWorkers());

const manyPages = () =>
  makePdf({
    pages: 400,
    text: Array.from({ length: 400 }, (_, i) => [`{{signature:r${i}}} and some more words on page ${i + 1}`]),
  });

test('a task over its limit is invalid_file "timeout" for ingest; its worker is replaced and later tasks work', async () => {
  await closePdfWorkers(1);
  const pdf = await manyPages();
  await inspectPdf(await makePdf()); // the first task waits for the warm-up, not for its own clock
  const err = await inspectPdf(pdf, { timeoutMs: 1 }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.code, 'invalid_file');
  assert.deepEqual(err.meta, { reason: 'timeout' });
  const r = await inspectPdf(pdf);
  assert.equal(r.pageCount, 400);
});

test('the clock starts when a worker takes the task: a queued task is not charged for the wait', async (t) => {
  await closePdfWorkers(1);
  const pdf = await manyPages();
  const tiny = await makePdf({ text: [['{{signature:a}}']] });
  await findAnchors(tiny);
  const t0 = performance.now();
  await findAnchors(pdf);
  const bigMs = performance.now() - t0;
  if (bigMs < 100)
    return t.skip(`the big scan took only ${Math.round(bigMs)} ms; too fast to tell queueing from running`);
  // Queued behind the big scan on the single worker, with a limit shorter than that scan but far above its own run.
  const first = findAnchors(pdf);
  const second = runPdfTask<{ anchors: unknown[] }>({ op: 'anchors', bytes: tiny }, bigMs / 2);
  assert.equal((await second).anchors.length, 1);
  assert.equal((await first).length, 400);
});

test('a timed-out task kills only its own worker: a task running on another worker is not disturbed', async () => {
  await closePdfWorkers(2);
  const pdf = await manyPages();
  await Promise.all([inspectPdf(await makePdf()), inspectPdf(await makePdf())]);
  let innocentDone = false;
  const innocent = findAnchors(pdf).finally(() => (innocentDone = true));
  const doomed = runPdfTask({ op: 'inspect', bytes: pdf, maxPages: 500 }, 1);
  await assert.rejects(doomed, PdfTaskTimeout);
  assert.equal(innocentDone, false, 'the innocent scan was still running when the other worker was killed');
  const anchors = await innocent;
  assert.equal(anchors.length, 400);
  assert.deepEqual(anchors[399], { ...anchors[399], role: 'r399', page: 400 });
  // The killed worker's replacement (warmed first) serves later tasks.
  assert.equal((await inspectPdf(pdf)).pageCount, 400);
});
