// Signer page behaviour: renders the PDF with pdf.js (served from our own /assets), places this signer's fields over
// it, collects a typed or drawn signature and posts sign / decline. Plain ES module, no build step; all texts come
// from the server in the page's locale. Requests go only to the relative base in body[data-base]. Each step the
// signer reaches is also announced as a `signet:page` DOM event (ready, viewed, signed, declined, expired, error), which
// an embedding's bridge relays to its host; `signed` only after the server answered that the signature committed.
// A request for a qualified signature (data.qes) posts the same body to /qes/start instead and, on its 200, leaves
// for the provider's address it names; every refusal is shown as a refused signature is.
const $ = (id) => document.getElementById(id);
const body = document.body;
const base = body.dataset.base;
const data = JSON.parse($('signer-data').textContent);
const S = data.strings;
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
// The fields area (signer-fields.js): typed inputs in the panel, their checks and their previews over the PDF.
const fieldInputs = await import(data.fieldsModule);

const els = {
  status: $('status'),
  viewer: $('viewer'),
  viewerMessage: $('viewer-message'),
  panel: $('panel'),
  signForm: $('sign-form'),
  typed: $('signature-typed'),
  typedPreview: $('typed-preview'),
  modeTyped: $('mode-typed'),
  modeDrawn: $('mode-drawn'),
  typedPane: $('typed-pane'),
  drawnPane: $('drawn-pane'),
  pad: $('signature-pad'),
  padClear: $('pad-clear'),
  signButton: $('sign-button'),
  signError: $('sign-error'),
  signWait: $('sign-wait'),
  declineButton: $('decline-button'),
  declineForm: $('decline-form'),
  declineReason: $('decline-reason'),
  declineCancel: $('decline-cancel'),
  declineConfirm: $('decline-confirm'),
  nextField: $('next-field'),
  declineError: $('decline-error'),
};

const st = {
  mode: 'typed',
  hasInk: false,
  busy: false,
  done: false,
  docReady: false,
  viewSent: false,
  endTimer: null,
  endDue: false,
};

// ---------------------------------------------------------------- server calls

async function post(path, payload) {
  let res;
  try {
    res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    return { ok: false, status: 0, code: 'network' };
  }
  let json = null;
  try {
    json = await res.json();
  } catch {
    // a body that is not JSON still has a status worth acting on
  }
  return { ok: res.ok, status: res.status, code: json && json.code, meta: (json && json.meta) || {}, json };
}

function emit(type, detail = {}) {
  window.dispatchEvent(new CustomEvent('signet:page', { detail: { type, data: detail } }));
}

/**
 * A refused action either ends the page (request closed or link invalid) or leaves it usable with a message. A 409
 * says where the request stands: a signature that committed although its answer was lost ends the page as signed.
 */
function handleFailure(res, errorEl) {
  const code = res.code || (res.status === 0 ? 'network' : String(res.status));
  if (res.status === 409) {
    const state = res.meta.state;
    if (state === 'signed') return finish('signed', [S.signedThanks, S.signedNext]);
    if (state === 'declined') return finish('declined', [S.declinedDone]);
    if (state === 'expired') return finish('expired', [S.expired]);
    if (state === 'session_expired') return finish('expired', [S.sessionEnded, S.sessionTimedOut]);
  }
  if (res.status === 409 || res.status === 404) {
    finish('error', [res.status === 404 ? S.errorNotFound : S.notOpen], code);
    return;
  }
  const msg = res.status === 0 ? S.errorNetwork : res.status === 429 ? S.errorRateLimited : S.errorGeneric;
  showError(errorEl, msg);
  els.status.dataset.state = 'error';
  els.status.dataset.code = code;
  emit('error', { code });
}

function showError(el, msg) {
  el.textContent = msg;
}

const ICONS = { signed: '✓', declined: '✕', expired: '◷', error: '!' };

/** Final state of the page: the document and the forms give way to one message. */
function finish(kind, lines, code, detail) {
  if (st.done) return;
  st.done = true;
  clearTimeout(st.endTimer);
  body.dataset.state = kind;
  const s = els.status;
  s.dataset.state = kind;
  if (code) s.dataset.code = code;
  s.classList.add('result');
  s.replaceChildren();
  const icon = document.createElement('span');
  icon.className = 'result-icon';
  icon.setAttribute('aria-hidden', 'true');
  icon.textContent = ICONS[kind] || '';
  const h = document.createElement('h2');
  h.textContent = lines[0];
  s.append(icon, h);
  for (const line of lines.slice(1)) {
    const p = document.createElement('p');
    p.textContent = line;
    s.append(p);
  }
  els.viewer.hidden = true;
  els.panel.hidden = true;
  els.nextField.hidden = true;
  s.tabIndex = -1;
  window.scrollTo(0, 0);
  s.focus({ preventScroll: true });
  emit(kind, kind === 'error' ? { code } : detail);
}

// ---------------------------------------------------------------- fields over the pages

const pct = (n) => `${(n * 100).toFixed(4)}%`;
const todayIso = () => new Date().toISOString().slice(0, 10);
// Same rule as the stamp the server draws for an initials field from a typed signature.
const initialsOf = (name) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .map((p) => [...p][0].toUpperCase())
    .join('');

const fieldEls = []; // { field, el, value, input? }

function makeField(f, pageWidth, pageHeight) {
  const el = document.createElement('div');
  el.className = `field field-${f.type}`;
  el.dataset.fieldId = f.id;
  el.style.left = pct(f.x / pageWidth);
  el.style.top = pct(f.y / pageHeight);
  el.style.width = pct(f.width / pageWidth);
  el.style.height = pct(f.height / pageHeight);
  const entry = { field: f, el, value: null, input: null };

  if (f.type === 'signature' || f.type === 'initials') {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'field-box';
    const label = document.createElement('span');
    label.className = 'field-label';
    label.textContent = f.type === 'signature' ? S.signHere : S.initials;
    const value = document.createElement('span');
    value.className = 'field-value script';
    b.append(label, value);
    b.setAttribute('aria-label', f.type === 'signature' ? S.signHere : S.initials);
    b.addEventListener('click', focusSignature);
    el.append(b);
    entry.value = value;
  } else if (fieldInputs.isInput(f)) {
    el.append(fieldInputs.overlayFor(f));
    entry.inputId = f.id;
  } else if (f.type === 'date') {
    const box = document.createElement('div');
    box.className = 'field-box';
    box.setAttribute('role', 'note');
    box.setAttribute('aria-label', `${S.date}: ${todayIso()}`);
    const value = document.createElement('span');
    value.className = 'field-value';
    value.textContent = todayIso();
    value.title = S.date;
    box.append(value);
    el.append(box);
    el.classList.add('filled');
  }
  fieldEls.push(entry);
  return el;
}

function focusSignature() {
  if (st.done) return;
  const target = st.mode === 'typed' ? els.typed : els.modeDrawn;
  els.panel.scrollIntoView({ behavior: 'smooth', block: 'start' });
  target.focus({ preventScroll: true });
}

/** Signature and initials boxes preview what will be stamped. */
function updateFieldPreviews() {
  const typed = els.typed.value.trim();
  const png = st.mode === 'drawn' && st.hasInk ? exportPad() : null;
  for (const e of fieldEls) {
    if (!e.value) continue;
    e.value.replaceChildren();
    let filled = false;
    if (png) {
      const img = document.createElement('img');
      img.alt = '';
      img.src = png.dataUrl;
      e.value.append(img);
      filled = true;
    } else if (st.mode === 'typed' && typed) {
      e.value.textContent = e.field.type === 'initials' ? initialsOf(typed) : typed;
      filled = true;
    }
    e.el.classList.toggle('filled', filled);
    // The accessible name starts with the text the box shows (axe: label-content-name-mismatch).
    const name = e.field.type === 'signature' ? S.signHere : S.initials;
    const shown = e.value.textContent;
    e.el.querySelector('button')?.setAttribute('aria-label', shown ? `${shown} · ${name}` : name);
  }
}

/** Jumps to the first field still needing input, in reading order. */
function nextField() {
  const pending = fieldEls
    .filter((e) => !e.el.classList.contains('filled'))
    .sort((a, b) => a.field.page - b.field.page || a.field.y - b.field.y || a.field.x - b.field.x);
  const target = pending[0];
  if (!target) return focusSignature();
  if (target.inputId) return fieldInputs.focusInput(target.inputId);
  target.el.scrollIntoView({ behavior: 'smooth', block: 'center' });
  (target.el.querySelector('button') || target.el).focus({ preventScroll: true });
}

// ---------------------------------------------------------------- PDF

async function loadDocument() {
  const { showPdf } = await import(data.pdfjs.view);
  await showPdf(els.viewer, `${base}/document.pdf`, {
    pdfjs: data.pdfjs,
    pageLabel: (page, pages) => fill(S.pageOf, { page, pages }),
    overlay(num, width, height) {
      const layer = document.createElement('div');
      layer.className = 'fields';
      for (const f of data.fields) if (f.page === num) layer.append(makeField(f, width, height));
      return layer;
    },
    onFirstPage() {
      els.viewerMessage.remove();
      els.viewer.setAttribute('aria-busy', 'false');
      st.docReady = true;
      updateSignButton();
      emit('ready');
      markViewed();
    },
  });
  if (data.fields.length > 0) els.nextField.hidden = false;
}

async function markViewed() {
  if (st.viewSent) return;
  st.viewSent = true;
  const res = await post('/view', {});
  if (res.ok) emit('viewed');
  else if (res.status === 409 || res.status === 404) handleFailure(res, els.signError);
}

// ---------------------------------------------------------------- signature pad

const pad = { ctx: null, drawing: false, last: null, box: null, dpr: 1 };

function sizePad() {
  const c = els.pad;
  const r = c.getBoundingClientRect();
  if (r.width === 0) return;
  const dpr = Math.min(window.devicePixelRatio || 1, 3);
  const w = Math.round(r.width * dpr);
  const h = Math.round(r.height * dpr);
  if (c.width === w && c.height === h) return;
  // Resizing a canvas clears it; carry the ink over, scaled.
  let old = null;
  if (st.hasInk) {
    old = document.createElement('canvas');
    old.width = c.width;
    old.height = c.height;
    old.getContext('2d').drawImage(c, 0, 0);
  }
  c.width = w;
  c.height = h;
  pad.dpr = dpr;
  pad.ctx = c.getContext('2d');
  if (old) {
    pad.ctx.drawImage(old, 0, 0, w, h);
    const sx = w / old.width;
    const sy = h / old.height;
    if (pad.box) pad.box = { x0: pad.box.x0 * sx, y0: pad.box.y0 * sy, x1: pad.box.x1 * sx, y1: pad.box.y1 * sy };
  }
}

function padPoint(e) {
  const r = els.pad.getBoundingClientRect();
  return { x: (e.clientX - r.left) * (els.pad.width / r.width), y: (e.clientY - r.top) * (els.pad.height / r.height) };
}

function grow(pt) {
  const m = 4 * pad.dpr;
  const b = pad.box;
  pad.box = b
    ? {
        x0: Math.min(b.x0, pt.x - m),
        y0: Math.min(b.y0, pt.y - m),
        x1: Math.max(b.x1, pt.x + m),
        y1: Math.max(b.y1, pt.y + m),
      }
    : { x0: pt.x - m, y0: pt.y - m, x1: pt.x + m, y1: pt.y + m };
}

function strokeTo(pt) {
  const ctx = pad.ctx;
  ctx.lineWidth = 2.4 * pad.dpr;
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.strokeStyle = '#1b2a6b';
  ctx.beginPath();
  ctx.moveTo(pad.last.x, pad.last.y);
  ctx.lineTo(pt.x, pt.y);
  ctx.stroke();
  pad.last = pt;
  grow(pt);
}

function setupPad() {
  const c = els.pad;
  c.addEventListener('pointerdown', (e) => {
    if (e.pointerType === 'mouse' && e.button !== 0) return;
    if (!pad.ctx) sizePad();
    if (!pad.ctx) return;
    e.preventDefault();
    c.setPointerCapture(e.pointerId);
    pad.drawing = true;
    pad.last = padPoint(e);
    // A tap leaves a dot.
    strokeTo({ x: pad.last.x + 0.01, y: pad.last.y });
  });
  c.addEventListener('pointermove', (e) => {
    if (!pad.drawing) return;
    const events = typeof e.getCoalescedEvents === 'function' ? e.getCoalescedEvents() : [];
    for (const ev of events.length ? events : [e]) strokeTo(padPoint(ev));
  });
  const end = () => {
    if (!pad.drawing) return;
    pad.drawing = false;
    st.hasInk = true;
    showError(els.signError, '');
    updateSignButton();
    updateFieldPreviews();
  };
  c.addEventListener('pointerup', end);
  c.addEventListener('pointercancel', end);
  // The keyboard cannot draw; its way to sign is the typed signature, one Enter or Space away (pad-hint says so).
  c.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    setMode('typed');
    els.typed.focus();
  });
  els.padClear.addEventListener('click', () => {
    if (pad.ctx) pad.ctx.clearRect(0, 0, c.width, c.height);
    pad.box = null;
    st.hasInk = false;
    updateSignButton();
    updateFieldPreviews();
  });
  window.addEventListener('resize', () => {
    if (st.mode === 'drawn') sizePad();
  });
}

/** The ink, cropped to what was drawn, as a PNG with a transparent background. */
function exportPad() {
  const c = els.pad;
  const b = pad.box;
  if (!b) return null;
  const x0 = Math.max(0, Math.floor(b.x0));
  const y0 = Math.max(0, Math.floor(b.y0));
  const x1 = Math.min(c.width, Math.ceil(b.x1));
  const y1 = Math.min(c.height, Math.ceil(b.y1));
  const out = document.createElement('canvas');
  out.width = Math.max(1, x1 - x0);
  out.height = Math.max(1, y1 - y0);
  out.getContext('2d').drawImage(c, x0, y0, out.width, out.height, 0, 0, out.width, out.height);
  const dataUrl = out.toDataURL('image/png');
  return { dataUrl, base64: dataUrl.slice(dataUrl.indexOf(',') + 1) };
}

// ---------------------------------------------------------------- signing and declining

function setMode(mode) {
  st.mode = mode;
  els.modeTyped.setAttribute('aria-pressed', String(mode === 'typed'));
  els.modeDrawn.setAttribute('aria-pressed', String(mode === 'drawn'));
  els.typedPane.hidden = mode !== 'typed';
  els.drawnPane.hidden = mode !== 'drawn';
  if (mode === 'drawn') sizePad();
  showError(els.signError, '');
  updateSignButton();
  updateFieldPreviews();
}

const hasSignature = () => (st.mode === 'typed' ? els.typed.value.trim() !== '' : st.hasInk);

function updateSignButton() {
  els.signButton.disabled = st.busy || st.done || !st.docReady || !hasSignature();
}

function setBusy(busy) {
  st.busy = busy;
  els.panel.setAttribute('aria-busy', String(busy));
  els.declineConfirm.disabled = busy;
  updateSignButton();
}

async function submitSign(e) {
  e.preventDefault();
  if (st.busy || st.done) return;
  showError(els.signError, '');
  if (!hasSignature()) return showError(els.signError, S.errorSignatureRequired);
  const { values: fields, problems } = fieldInputs.readValues();
  if (problems.length) {
    showError(els.signError, S.errorFieldsInvalid);
    fieldInputs.showProblems(problems);
    return;
  }
  const signature =
    st.mode === 'typed'
      ? { type: 'typed', text: els.typed.value.trim() }
      : { type: 'drawn', png_base64: exportPad().base64 };
  setBusy(true);
  if (data.qes) els.signWait.textContent = data.qesOpening;
  const res = await post(
    data.qes ? '/qes/start' : '/sign',
    Object.keys(fields).length ? { signature, fields } : { signature },
  );
  if (res.ok && data.qes) {
    const to = providerUrl(res.json);
    // The page stays busy while the browser leaves; an answer without a usable address is a failure like any other.
    if (to) return location.assign(to);
    Object.assign(res, { ok: false, code: 'qes_redirect_missing' });
  }
  if (data.qes) els.signWait.textContent = '';
  setBusy(false);
  if (res.ok) finish('signed', [S.signedThanks, S.signedNext]);
  else if (res.status === 422 && res.code === 'template_input_invalid') {
    // The server's checks are the same as the page's; its problems land next to their inputs too.
    showError(els.signError, S.errorFieldsInvalid);
    fieldInputs.showProblems(res.meta.problems || []);
  } else handleFailure(res, els.signError);
  endIfDue();
}

/** The provider's address from a /qes/start answer: an absolute http(s) URL, nothing else (no `javascript:`). */
function providerUrl(json) {
  const url = json && json.redirect_url;
  if (typeof url !== 'string') return null;
  try {
    const u = new URL(url, location.href);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The session's end waits for an action in flight: its answer decides whether the signer signed in time. */
function endIfDue() {
  if (st.endDue && !st.busy) finish('expired', [S.sessionEnded, S.sessionTimedOut]);
}

function toggleDecline(open) {
  els.declineForm.hidden = !open;
  els.declineButton.setAttribute('aria-expanded', String(open));
  els.declineButton.hidden = open;
  if (open) els.declineReason.focus();
  else els.declineButton.focus();
}

async function submitDecline(e) {
  e.preventDefault();
  if (st.busy || st.done) return;
  showError(els.declineError, '');
  const reason = els.declineReason.value.trim();
  if (!reason) {
    els.declineReason.setAttribute('aria-invalid', 'true');
    showError(els.declineError, S.errorReasonRequired);
    els.declineReason.focus();
    return;
  }
  setBusy(true);
  const res = await post('/decline', { reason });
  setBusy(false);
  if (res.ok) finish('declined', [S.declinedDone], undefined, { reason });
  else handleFailure(res, els.declineError);
  endIfDue();
}

function init() {
  els.modeTyped.addEventListener('click', () => setMode('typed'));
  els.modeDrawn.addEventListener('click', () => setMode('drawn'));
  els.typed.addEventListener('input', () => {
    els.typedPreview.textContent = els.typed.value;
    showError(els.signError, '');
    updateSignButton();
    updateFieldPreviews();
  });
  els.signForm.addEventListener('submit', submitSign);
  els.declineButton.addEventListener('click', () => toggleDecline(true));
  els.declineCancel.addEventListener('click', () => toggleDecline(false));
  els.declineForm.addEventListener('submit', submitDecline);
  els.declineReason.addEventListener('input', () => {
    els.declineReason.removeAttribute('aria-invalid');
    showError(els.declineError, '');
  });
  els.nextField.addEventListener('click', nextField);
  // Back from the provider through the browser's history: the page left busy is usable again.
  window.addEventListener('pageshow', (e) => {
    if (!e.persisted || !data.qes || !st.busy) return;
    els.signWait.textContent = '';
    setBusy(false);
  });
  fieldInputs.initFields(S, data.fields, () => {
    if (els.signError.textContent === S.errorFieldsInvalid) showError(els.signError, '');
  });
  setupPad();
  updateSignButton();
  // An embed session's page ends with its session, even if the signer is mid-way (the server refuses it then too).
  if (typeof data.endsInMs === 'number') {
    st.endTimer = setTimeout(() => {
      st.endDue = true;
      endIfDue();
    }, data.endsInMs);
  }
  loadDocument().catch(() => {
    els.viewerMessage.textContent = S.errorDocumentLoad;
    els.viewerMessage.classList.add('error');
    els.viewer.setAttribute('aria-busy', 'false');
    emit('error', { code: 'document_unavailable' });
  });
}

init();
