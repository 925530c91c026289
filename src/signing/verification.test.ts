// The pure rules of signer verification: how a typed or pasted code is read, how a destination is masked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { maskDestination, normalizeCode } from './verification.js';

test('a code is read as ASCII digits whatever the keyboard or the mail it was copied from', () => {
  assert.equal(normalizeCode('123456'), '123456');
  assert.equal(normalizeCode(' 123 456 '), '123456');
  assert.equal(normalizeCode('123-456'), '123456');
  assert.equal(normalizeCode('\u200f123456'), '123456', 'a right-to-left mark from an Arabic mail');
  assert.equal(normalizeCode('１２３４５６'), '123456', 'full-width digits');
  assert.equal(normalizeCode('١٢٣٤٥٦'), '123456', 'Arabic-Indic digits');
  assert.equal(normalizeCode('۱۲۳۴۵۶'), '123456', 'Persian digits');
  assert.equal(normalizeCode('12345a'), '12345a', 'letters stay, so a wrong code stays wrong');
});

test('destinations are masked enough to recognise, not to learn', () => {
  assert.equal(maskDestination('email_code', { email: 'ana@example.com', phone: null }), 'a***@example.com');
  assert.equal(maskDestination('sms_code', { email: '', phone: '+4915123456767' }), '+49*********67');
});
