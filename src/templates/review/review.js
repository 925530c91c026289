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

async function loadDocument() {
  const { showPdf } = await import(data.pdfjs.view);
  await showPdf(viewer, data.pdf, {
    pdfjs: data.pdfjs,
    pageLabel: (page, pages) => fill(S.pageOf, { page, pages }),
    onFirstPage() {
      message.remove();
      viewer.setAttribute('aria-busy', 'false');
    },
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
