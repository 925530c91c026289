// Embed bridge, loaded by the framed signing page before signer.js. It relays the page's `signet:page` events to the
// host as {source: "signet", version: 1, type, session_id, signing_request_id, data}, posted only to the session's
// registered origin (never '*'), and reports the page's height as `resize`. Once an outcome (signed, declined,
// expired) was posted, nothing but `resize` follows: a host never sees failure after success nor two outcomes.
const cfg = JSON.parse(document.getElementById('bridge-data').textContent);
const framed = window.parent !== window;
const OUTCOMES = ['signed', 'declined', 'expired'];
let outcome = null;

function post(type, data = {}) {
  if (!framed) return;
  if (type !== 'resize') {
    if (outcome) return;
    if (OUTCOMES.includes(type)) outcome = type;
  }
  const message = {
    source: cfg.source,
    version: cfg.version,
    type,
    session_id: cfg.session_id,
    signing_request_id: cfg.signing_request_id,
    data,
  };
  window.parent.postMessage(message, cfg.origin);
}

window.addEventListener('signet:page', (e) => post(e.detail.type, e.detail.data || {}));

// The host sizes the frame to the page, so the signer never scrolls inside a scrolling page. The root element's
// box is the content's height (unlike scrollHeight, never less than the frame), so the frame also shrinks.
let lastHeight = -1;
let scheduled = false;
function reportHeight() {
  scheduled = false;
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === lastHeight) return;
  lastHeight = height;
  post('resize', { height });
}
if (framed) {
  new ResizeObserver(() => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(reportHeight);
  }).observe(document.documentElement);
}

// An ended page (session over, request already signed, declined, withdrawn or expired) says why, once.
if (cfg.ended) post(cfg.ended.type, cfg.ended.data);
