import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_LOCALES, catalogues, type MessageKey } from '../i18n/i18n.js';
import { addProblem, problem, problemText, PROBLEM_VARS, type Problem, type ProblemCode } from './problems.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('every problem code has a sentence in every language, with exactly its variables', () => {
  const codes = Object.keys(PROBLEM_VARS) as ProblemCode[];
  for (const code of codes) {
    for (const l of KNOWN_LOCALES) {
      const text = catalogues[l][`verify.problem.${code}` as MessageKey];
      assert.ok(text, `${l}:${code}`);
      assert.deepEqual(placeholders(text), [...PROBLEM_VARS[code]].sort(), `${l}:${code}`);
    }
  }
  // And no sentence for a code that does not exist.
  const keys = Object.keys(catalogues.en).filter((k) => k.startsWith('verify.problem.'));
  assert.deepEqual(keys.sort(), codes.map((c) => `verify.problem.${c}`).sort());
});

test("problemText fills the variables in the reader's language", () => {
  const p = problem('cert_expired', { subject: 'CN=Alice', not_after: '2030-01-01T00:00:00.000Z' });
  assert.equal(problemText('en', p), 'The certificate of CN=Alice expired on 2030-01-01T00:00:00.000Z.');
  assert.equal(problemText('de', p), 'Das Zertifikat von CN=Alice ist am 2030-01-01T00:00:00.000Z abgelaufen.');
  assert.equal(problemText('fr', problem('digest_mismatch')), 'Le contenu signé a été modifié après la signature.');
});

test('addProblem keeps one of each', () => {
  const list: Problem[] = [];
  addProblem(list, problem('weak_algorithm', { algorithm: 'SHA1' }));
  addProblem(list, problem('weak_algorithm', { algorithm: 'SHA1' }));
  addProblem(list, problem('weak_algorithm', { algorithm: 'RSA-1024' }));
  addProblem(list, problem('digest_mismatch'));
  assert.deepEqual(
    list.map((p) => p.vars?.algorithm ?? p.code),
    ['SHA1', 'RSA-1024', 'digest_mismatch'],
  );
});
