import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { cspHeader } from './headers.js';
import {
  accentOf,
  brandedClass,
  brandLogo,
  brandStyle,
  brandStyleSource,
  darker,
  isBranded,
  viaService,
} from './brand.js';

const brand = (o: Partial<{ name: string; color: string | null; logo: { path: string } | null }> = {}) => ({
  name: 'Acme & Söhne <GmbH>',
  color: null,
  logo: null,
  ...o,
});

describe('web/brand', () => {
  test('only an exact #rrggbb reaches CSS; anything else leaves the page in Signet’s colours', () => {
    assert.equal(accentOf(brand({ color: '#1A5FB4' })), '#1a5fb4');
    for (const bad of ['red', '#fff', '#12345g', '#1a5fb4;}body{display:none', ' #1a5fb4', '#1a5fb4 ', 'url(x)', ''])
      assert.equal(accentOf(brand({ color: bad })), null, bad);
    assert.equal(brandStyle(brand({ color: '#1a5fb4</style><script>' })), '');
    assert.equal(brandStyleSource(brand({ color: 'expression(1)' })), null);
  });

  test('the style element sets --primary and a darker hover; its CSP hash is the hash of exactly its text', () => {
    const b = brand({ color: '#1b1b1b' });
    const style = brandStyle(b);
    assert.equal(style, '<style>:root{--primary:#1b1b1b;--primary-dark:#161616;--brand-accent:#1b1b1b}</style>');
    const inner = style.slice('<style>'.length, -'</style>'.length);
    const source = brandStyleSource(b)!;
    assert.equal(source, `sha256-${createHash('sha256').update(inner).digest('base64')}`);
    assert.match(
      cspHeader({ styles: ['self', source] }),
      new RegExp(`style-src 'self' '${source.replace(/[+/]/g, '\\$&')}'`),
    );
    assert.equal(darker('#ffffff'), '#cccccc');
    assert.equal(darker('#000000'), '#000000');
  });

  test('the logo is a same-origin <img> whose alt text is the escaped workspace name', () => {
    const b = brand({ logo: { path: '/brand/ws_1/logo/0123456789abcdef' } });
    assert.equal(
      brandLogo(b),
      '<img class="brand-logo" src="/brand/ws_1/logo/0123456789abcdef" alt="Acme &#38; Söhne &#60;GmbH&#62;">',
    );
    for (const path of ['https://evil.example/x.png', '//evil.example/x.png', 'javascript:alert(1)', '/a" onerror="x'])
      assert.equal(brandLogo(brand({ logo: { path } })), '', path);
  });

  test('without a colour or a logo nothing changes: no style, no logo, no "via", no class', () => {
    for (const b of [null, undefined, brand(), brand({ color: 'blue' })]) {
      assert.equal(isBranded(b), false);
      assert.equal(brandStyle(b), '');
      assert.equal(brandLogo(b), '');
      assert.equal(viaService(b, 'en'), '');
      assert.equal(brandedClass(b), '');
    }
    assert.equal(viaService(brand({ color: '#1a5fb4' }), 'de'), ' <span class="via-service">über Signet</span>');
    assert.equal(brandedClass(brand({ logo: { path: '/brand/x' } })), ' branded');
  });
});
