// `signet verify FILE`: the report of POST /v1/verifications, offline, trusting the data directory's CA.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { sealPdf } from '../documents/pdf/seal.work.js';
import { systemClock } from '../lib/clock.js';
import { loadOrCreatePki } from '../pki/pki.js';
import { createValidationSource } from '../pki/validation-data.js';
import { cliDataDir, oneErrorLine, oneJson } from './testing/cli.js';

describe('signet verify', () => {
  const cli = cliDataDir();

  test('a sealed file: valid B-LTA (exit 0); one byte changed: invalid (exit 2); not a PDF: one error line', async () => {
    const pki = await loadOrCreatePki({ dataDir: cli.dir, clock: systemClock });
    const longTerm = {
      source: createValidationSource({ cas: [pki.ca], clock: systemClock }),
      tsaIssuersDer: [pki.caCertDer],
    };
    const sealed = await sealPdf(await makePdf({ pages: 1, text: [['Kaufvertrag']] }), {
      seal: pki.seal,
      tsa: pki.localTsa,
      longTerm,
    });
    const file = path.join(cli.dir, 'sealed.pdf');
    writeFileSync(file, sealed.pdf);
    const ok = oneJson(await cli.signet(['verify', file, '--json']), 'verify --json');
    assert.equal(ok.verdict, 'valid', JSON.stringify(ok));
    assert.equal(ok.pades_level, 'B-LTA');
    assert.equal(ok.document, null, 'not a document of this database');

    const changed = Buffer.from(sealed.pdf);
    changed[120] ^= 0x01;
    const changedFile = path.join(cli.dir, 'changed.pdf');
    writeFileSync(changedFile, changed);
    const bad = await cli.signet(['verify', changedFile, '--locale', 'de']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stdout, /verdict: invalid/);
    assert.match(bad.stdout, /Der signierte Inhalt wurde nach der Signatur verändert/);

    const junk = path.join(cli.dir, 'junk.pdf');
    writeFileSync(junk, 'hello');
    assert.match(oneErrorLine(await cli.signet(['verify', junk]), 'verify junk'), /invalid_file/);
    assert.match(oneErrorLine(await cli.signet(['verify', path.join(cli.dir, 'missing.pdf')]), 'missing'), /ENOENT/);
  });
});
