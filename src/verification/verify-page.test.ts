// The /verify report names each signature's level beside it: a QES as a qualified electronic signature, any other
// signature as advanced, a document timestamp with no level row at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_LOCALES, strings } from '../i18n/i18n.js';
import type { VerificationOut } from './verification.schemas.js';
import { renderVerifyPage } from './verify-page.js';

type Sig = VerificationOut['signatures'][number];
const sig = (field: string, kind: Sig['kind'], level: Sig['level']): Sig => ({
  kind,
  field,
  intact: true,
  signer: { subject: `CN=${field}`, issuer: 'CN=Issuer', serial: '01' },
  signed_at: '2026-11-23T09:30:12.000Z',
  time_proven: true,
  trusted: true,
  level,
  problems: [],
  problem_codes: [],
});
const report: VerificationOut = {
  verdict: 'valid',
  pades_level: 'B-LTA',
  modified_after_signing: false,
  sha256: 'ab'.repeat(32),
  document: null,
  problems: [],
  problem_codes: [],
  signatures: [
    sig('Anna', 'signature', 'qes'),
    sig('Seal', 'signature', 'advanced'),
    sig('Stamp', 'document_timestamp', null),
  ],
};

/** Each signature's section, by its field name. */
const sections = (html: string) =>
  new Map(
    [...html.matchAll(/<section class="signature"[^>]*>[\s\S]*?<\/section>/g)].map((m) => [
      /<h2>[^:]*: ([^<]*)<\/h2>/.exec(m[0])![1]!,
      m[0],
    ]),
  );

test('in English: "Qualified electronic signature" beside the QES only', () => {
  const html = sections(renderVerifyPage({ locale: 'en', stylesheet: '/x.css', report }));
  assert.match(html.get('Anna')!, /data-level="qes"/);
  assert.match(html.get('Anna')!, /<dd class="level-qes">Qualified electronic signature<\/dd>/);
  assert.doesNotMatch(html.get('Seal')!, /Qualified electronic signature/);
  assert.match(html.get('Seal')!, /<dd class="level-advanced">Advanced electronic signature or seal/);
  assert.doesNotMatch(html.get('Stamp')!, /eIDAS level/, 'a document timestamp has no level row');
  assert.match(html.get('Stamp')!, /data-level="none"/);
});

test('every language names both levels in its own words', () => {
  for (const locale of KNOWN_LOCALES) {
    const s = strings(locale, 'verify');
    const html = sections(renderVerifyPage({ locale, stylesheet: '/x.css', report }));
    assert.ok(html.get('Anna')!.includes(s['page.levelQes']), `${locale}: QES named`);
    assert.ok(html.get('Seal')!.includes(s['page.levelAdvanced']), `${locale}: advanced named`);
    assert.ok(!html.get('Seal')!.includes(s['page.levelQes']), `${locale}: the seal is never called qualified`);
    assert.ok(!html.get('Stamp')!.includes(s['page.signatureLevel']), `${locale}: no level for a timestamp`);
  }
});

test('a purged document: sealed by this service, its record purged on a date, in every language', () => {
  const purged: VerificationOut = {
    ...report,
    document: {
      id: 'doc_1',
      title: '',
      completed_at: '2026-11-23T09:30:12.000Z',
      audit_chain_valid: false,
      purged_at: '2027-02-21T10:00:00.000Z',
    },
  };
  const en = renderVerifyPage({ locale: 'en', stylesheet: '/x.css', report: purged });
  assert.match(
    en,
    /<p class="purged">Sealed by this service on [^<]*2026[^<]*; its record was purged on [^<]*2027[^<]*\.<\/p>/,
  );
  assert.doesNotMatch(en, /audit trail/i, 'no word on an audit trail that is gone');
  for (const locale of KNOWN_LOCALES) {
    const html = renderVerifyPage({ locale, stylesheet: '/x.css', report: purged });
    assert.match(html, /<p class="purged">[^<]*2027/, locale);
  }
});
