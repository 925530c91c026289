// Review page behaviour: draws the staged PDF with pdf.js (served from our own /assets), each page a canvas plus a
// hidden copy of its text for screen readers. The page works without this script (the values, the recipients, the
// PDF link and the confirm and discard forms are plain HTML); it only adds the preview, guards against a double
// submit and moves focus into the discard disclosure. Plain ES module, no build step; texts come from the server.
const $ = (id) => document.getElementById(id);
const data = JSON.parse($('review-data').textContent);
const S = data.strings;
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));

const viewer = $('viewer');
const message = $('viewer-message');

// ---------------------------------------------------------------- PDF

const pages = []; // { num, page, width, height, el, canvas, renderedWidth, task, stale }
let renderChain = Promise.resolve();

function makePage(num, total, page) {
  const vp = page.getViewport({ scale: 1 });
  const wrap = document.createElement('div');
  wrap.className = 'page-wrap';
  const el = document.createElement('section');
  el.className = 'page';
  el.dataset.page = String(num);
  el.setAttribute('aria-label', fill(S.pageOf, { page: num, pages: total }));
  el.style.aspectRatio = `${vp.width} / ${vp.height}`;
  const canvas = document.createElement('canvas');
  canvas.setAttribute('aria-hidden', 'true');
  // The canvas is a picture; screen readers get the page's text from this hidden copy instead.
  const text = document.createElement('div');
  text.className = 'sr-only page-text';
  page
    .getTextContent()
    .then((tc) => {
      text.textContent = tc.items.map((i) => ('str' in i ? i.str + (i.hasEOL ? '\n' : ' ') : '')).join('');
      el.dataset.text = 'ready';
    })
    .catch(() => undefined);
  el.append(canvas, text);
  const caption = document.createElement('p');
  caption.className = 'page-number';
  caption.setAttribute('aria-hidden', 'true');
  caption.textContent = fill(S.pageOf, { page: num, pages: total });
  wrap.append(el, caption);
  const p = { num, page, width: vp.width, height: vp.height, el, canvas, renderedWidth: 0, task: null, stale: true };
  pages.push(p);
  return wrap;
}

async function renderPage(p) {
  const cssWidth = p.el.clientWidth;
  if (cssWidth === 0) return;
  const dpr = Math.min(window.devicePixelRatio || 1, 3);
  let scale = (cssWidth / p.width) * dpr;
  // Keep the backing store within what mobile browsers allow for one canvas.
  const maxPixels = 8_000_000;
  if (p.width * p.height * scale * scale > maxPixels) scale = Math.sqrt(maxPixels / (p.width * p.height));
  const viewport = p.page.getViewport({ scale });
  if (p.task) p.task.cancel();
  const canvas = document.createElement('canvas');
  canvas.setAttribute('aria-hidden', 'true');
  canvas.width = Math.floor(viewport.width);
  canvas.height = Math.floor(viewport.height);
  const task = p.page.render({ canvas, viewport });
  p.task = task;
  try {
    await task.promise;
  } catch (err) {
    if (err && err.name === 'RenderingCancelledException') return;
    throw err;
  } finally {
    if (p.task === task) p.task = null;
  }
  // Swap only when done, so a re-render never flashes an empty page.
  p.canvas.replaceWith(canvas);
  p.canvas = canvas;
  p.renderedWidth = cssWidth;
  p.stale = false;
  p.el.classList.add('rendered');
}

/** One page at a time, so a long document does not hold dozens of canvases mid-render. */
const queueRender = (p) => {
  renderChain = renderChain.then(() => (p.stale ? renderPage(p) : undefined)).catch(() => undefined);
  return renderChain;
};

async function loadDocument() {
  const pdfjs = await import(data.pdfjs.lib);
  pdfjs.GlobalWorkerOptions.workerSrc = data.pdfjs.worker;
  const doc = await pdfjs.getDocument({
    url: data.pdf,
    isEvalSupported: false, // the CSP forbids eval; pdf.js then draws glyphs without compiled paths
    enableXfa: false,
    standardFontDataUrl: data.pdfjs.fonts,
    cMapUrl: data.pdfjs.cmaps,
    cMapPacked: true,
  }).promise;

  const total = doc.numPages;
  viewer.append(makePage(1, total, await doc.getPage(1)));
  await renderPage(pages[0]);
  message.remove();
  viewer.setAttribute('aria-busy', 'false');

  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        const p = pages.find((x) => x.el === entry.target);
        if (p && p.stale) queueRender(p);
      }
    },
    { rootMargin: '800px 0px' },
  );
  for (let n = 2; n <= total; n++) viewer.append(makePage(n, total, await doc.getPage(n)));
  for (const p of pages.slice(1)) observer.observe(p.el);
  viewer.dataset.pages = String(total);

  let resizeTimer;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const p of pages) {
        if (Math.abs(p.el.clientWidth - p.renderedWidth) < 2) continue;
        p.stale = true;
        const r = p.el.getBoundingClientRect();
        if (r.bottom > -800 && r.top < window.innerHeight + 800) queueRender(p);
      }
    }, 200);
  });
}

// ---------------------------------------------------------------- forms

/** A second click while the first post is on its way would only meet a 409: every action button waits. */
function guardForms() {
  const buttons = [...document.querySelectorAll('form[method="post"] button[type="submit"]')];
  for (const form of document.querySelectorAll('form[method="post"]')) {
    form.addEventListener('submit', (e) => {
      if (form.dataset.sent) {
        e.preventDefault();
        return;
      }
      form.dataset.sent = 'true';
      $('panel').setAttribute('aria-busy', 'true');
      // Disabled after this turn, so the submission already under way keeps its button.
      setTimeout(() => buttons.forEach((b) => (b.disabled = true)), 0);
    });
  }
  // Back-forward cache: a page restored after the post must be usable again.
  window.addEventListener('pageshow', (e) => {
    if (!e.persisted) return;
    buttons.forEach((b) => (b.disabled = false));
    for (const form of document.querySelectorAll('form[method="post"]')) delete form.dataset.sent;
    $('panel').removeAttribute('aria-busy');
  });
  const discard = $('discard');
  discard.addEventListener('toggle', () => {
    if (discard.open) $('discard-button').focus();
  });
}

function init() {
  guardForms();
  message.hidden = false;
  loadDocument().catch(() => {
    message.textContent = S.errorDocumentLoad;
    message.classList.add('error');
    viewer.setAttribute('aria-busy', 'false');
  });
}

init();
