import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cspDirectives, cspHeader, pageHeaders, PDF_VIEWER } from './headers.js';

describe('web/headers', () => {
  test('CSP: default-src first, then the rules in the order written, keywords quoted', () => {
    assert.deepEqual(cspDirectives({ scripts: ['self'], images: ['self', 'data:'], frameAncestors: ['none'] }), {
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'img-src': ["'self'", 'data:'],
      'frame-ancestors': ["'none'"],
    });
    assert.equal(
      cspHeader({ ...PDF_VIEWER, formActions: ['self'], frameAncestors: ['https://a.example'] }),
      "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; " +
        "worker-src 'self' blob:; form-action 'self'; frame-ancestors https://a.example",
    );
    // Rules naming no images still allow the shell's `data:,` icon.
    assert.equal(cspHeader({}), "default-src 'self'; img-src 'self' data:");
  });

  test('page headers: no referrer, never cached; X-Frame-Options only when nobody may frame the page', () => {
    assert.deepEqual(pageHeaders({ csp: { frameAncestors: ['none'] } }), {
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    });
    const framed = pageHeaders({ csp: { frameAncestors: ['https://host.example'] }, noSniff: true, noIndex: true });
    assert.equal(framed['x-frame-options'], undefined);
    assert.equal(
      framed['content-security-policy'],
      "default-src 'self'; img-src 'self' data:; frame-ancestors https://host.example",
    );
    assert.equal(framed['x-content-type-options'], 'nosniff');
    assert.equal(framed['x-robots-tag'], 'noindex, nofollow');
  });
});
