// Signet embedded signing, host-page helper (served at /embed/signet.js). Guarantee: a message is acted on only if it
// comes from the iframe this helper mounted (event.source) AND from the Signet origin of its session URL
// (event.origin) AND has the Signet shape; messages from other frames, other origins or the host page itself are
// ignored without a callback. Classic script, no build step, no dependencies; it defines window.Signet and nothing
// else. Types: signet.d.ts next to this file.
(function () {
  'use strict';

  const VERSION = 1;
  const DEFAULT_HEIGHT = '600px';
  // A frame asking for more is broken or hostile; the host's layout should not follow it.
  const MAX_HEIGHT = 100000;

  // Message type → its callback option. Looked up as an own property, so "toString" and friends are not types.
  const CALLBACKS = {
    ready: 'onReady',
    viewed: 'onViewed',
    signed: 'onSigned',
    declined: 'onDeclined',
    expired: 'onExpired',
    error: 'onError',
    resize: null,
  };
  // After one of these the signing is over: the host never sees a second outcome, nor a failure after success.
  const TERMINAL = { signed: true, declined: true, expired: true };
  const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

  function resolveElement(element) {
    let el = element;
    if (typeof element === 'string') {
      try {
        el = document.querySelector(element);
      } catch (_err) {
        el = null; // an invalid selector finds nothing
      }
    }
    if (!(el instanceof HTMLElement)) throw new TypeError('Signet.mount: element not found: ' + String(element));
    return el;
  }

  function parseSessionUrl(sessionUrl) {
    let url;
    try {
      url = new URL(sessionUrl); // no base: a relative URL throws
    } catch (_err) {
      url = null;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
      throw new TypeError('Signet.mount: sessionUrl must be an absolute http(s) URL');
    return url;
  }

  // A host callback that throws is the host's bug: report it as uncaught (so error trackers see it) without
  // skipping the other callbacks or the helper's own bookkeeping.
  function call(fn, msg) {
    if (typeof fn !== 'function') return;
    try {
      fn(msg);
    } catch (err) {
      setTimeout(() => {
        throw err;
      });
    }
  }

  function mount(element, sessionUrl, options) {
    const opts = options || {};
    const url = parseSessionUrl(sessionUrl);
    const el = resolveElement(element);
    const origin = url.origin;

    const iframe = document.createElement('iframe');
    iframe.src = url.href;
    iframe.title = opts.title || 'Document signing';
    iframe.setAttribute('allow', ''); // no camera, microphone, payment, …: signing needs none
    iframe.referrerPolicy = 'origin'; // the host's paths and query strings are none of Signet's business
    iframe.style.width = '100%';
    iframe.style.border = '0';
    iframe.style.display = 'block';
    iframe.style.height = typeof opts.height === 'number' ? opts.height + 'px' : opts.height || DEFAULT_HEIGHT;

    let finished = false;
    let mounted = true;

    function onMessage(event) {
      // contentWindow is null once the iframe is detached, so a removed frame can never match.
      if (event.origin !== origin || event.source !== iframe.contentWindow) return;
      const msg = event.data;
      if (!msg || typeof msg !== 'object' || msg.source !== 'signet' || msg.version !== VERSION) return;
      if (typeof msg.type !== 'string' || !hasOwn(CALLBACKS, msg.type)) return;

      if (msg.type === 'resize') {
        const h = msg.data && msg.data.height;
        if (typeof h === 'number' && isFinite(h) && h >= 0) iframe.style.height = Math.min(h, MAX_HEIGHT) + 'px';
      } else if (msg.type === 'error' || hasOwn(TERMINAL, msg.type)) {
        if (finished) return;
        finished = hasOwn(TERMINAL, msg.type);
      }
      call(CALLBACKS[msg.type] && opts[CALLBACKS[msg.type]], msg);
      call(opts.onEvent, msg);
    }

    el.appendChild(iframe);
    window.addEventListener('message', onMessage);

    return {
      iframe,
      unmount() {
        if (!mounted) return;
        mounted = false;
        window.removeEventListener('message', onMessage);
        iframe.remove();
      },
    };
  }

  window.Signet = Object.freeze({ version: VERSION, mount });
})();
