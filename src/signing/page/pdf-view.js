// The PDF preview of the signer and review pages, written once: pdf.js (from our own /assets) draws each page on a
// canvas, with a hidden copy of its text for screen readers and an optional overlay (the signer's fields). The first
// page renders at once; the others when they come near the viewport, one at a time, and again after a resize.
// Plain browser ES module, no build step; the pages load it through its versioned asset URL.

/**
 * Shows the PDF at `url` in `viewer`. `o.pdfjs`: {lib, worker, fonts, cmaps} asset URLs; `o.pageLabel(num, total)`:
 * each page's accessible name; `o.overlay(num, width, height)`: an element laid over the page, or null;
 * `o.onFirstPage()`: called once page 1 is drawn. Resolves when every page is in place, with the page count.
 */
export async function showPdf(viewer, url, o) {
  const pdfjs = await import(o.pdfjs.lib);
  pdfjs.GlobalWorkerOptions.workerSrc = o.pdfjs.worker;
  const doc = await pdfjs.getDocument({
    url,
    isEvalSupported: false, // the CSP forbids eval; pdf.js then draws glyphs without compiled paths
    enableXfa: false,
    standardFontDataUrl: o.pdfjs.fonts,
    cMapUrl: o.pdfjs.cmaps,
    cMapPacked: true,
  }).promise;

  const pages = []; // { num, page, width, height, el, canvas, renderedWidth, task, stale }
  let renderChain = Promise.resolve();
  const total = doc.numPages;

  function makePage(num, page) {
    const vp = page.getViewport({ scale: 1 });
    const wrap = document.createElement('div');
    wrap.className = 'page-wrap';
    const el = document.createElement('section');
    el.className = 'page';
    el.dataset.page = String(num);
    el.setAttribute('aria-label', o.pageLabel(num, total));
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
    const layer = o.overlay ? o.overlay(num, vp.width, vp.height) : null;
    if (layer) el.append(layer);
    const caption = document.createElement('p');
    caption.className = 'page-number';
    caption.setAttribute('aria-hidden', 'true');
    caption.textContent = o.pageLabel(num, total);
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

  viewer.append(makePage(1, await doc.getPage(1)));
  await renderPage(pages[0]);
  o.onFirstPage?.();

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
  for (let n = 2; n <= total; n++) viewer.append(makePage(n, await doc.getPage(n)));
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
  return { total };
}
