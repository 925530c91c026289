import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEmailAddress, isHeaderAddress } from './email.js';

// [address, isEmailAddress, isHeaderAddress]
const cases: Array<[string, boolean, boolean]> = [
  ['ada@example.com', true, true],
  ['a.b+tag@mail.example.co.uk', true, true],
  ["o'brien@example.ie", true, true],
  ['josé@exämple.de', true, true],
  ['a@b.c', true, true],
  ['a@b..c', true, true],
  ['x@localhost', false, true],
  ['no-reply@localhost', false, true],
  ['a@b.', false, true],
  ['a@.b', false, true],
  ['', false, false],
  ['ada', false, false],
  ['ada@', false, false],
  ['@example.com', false, false],
  ['a@b@example.com', false, false],
  [' ada@example.com', false, false],
  ['ada@example.com\r\nBcc: x@evil.example', false, false],
  ['ada @example.com', false, false],
  ['ada@exam\tple.com', false, false],
  ['Ada <ada@example.com>', false, false],
  ['<ada@example.com>', false, false],
  ['a(b@example.com', false, false],
  ['a)b@example.com', false, false],
  ['a[b@example.com', false, false],
  ['a]b@example.com', false, false],
  ['a\\b@example.com', false, false],
  ['a,b@example.com', false, false],
  ['a;b@example.com', false, false],
  ['a:b@example.com', false, false],
  ['"a"@example.com', false, false],
  ['ada@exa,mple.com', false, false],
  ['ada@example.com;', false, false],
  ['ada@example.com\u00a0', false, false],
  ['ada@example.com\u2028', false, false],
];

for (const [address, email, header] of cases) {
  test(`${JSON.stringify(address)}: ${email ? 'an' : 'not an'} e-mail address, ${header ? '' : 'not '}fit for a header`, () => {
    assert.equal(isEmailAddress(address), email);
    assert.equal(isHeaderAddress(address), header);
  });
}

test('every address a person may give may also stand in a header', () => {
  for (const [address] of cases) if (isEmailAddress(address)) assert.ok(isHeaderAddress(address), address);
});
