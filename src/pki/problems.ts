// What signature and chain checks report: a closed set of codes, each with a fixed set of variables, so every
// problem can be put into words in every language (i18n section `verify`, keys `verify.problem.<code>`). The
// compiler checks that each code has a catalogue key; i18n's tests check the placeholders match PROBLEM_VARS.
import { t, type Locale, type MessageKey } from '../i18n/i18n.js';

/** Each code with the names of its variables. Dates in variables are ISO 8601 UTC. */
export const PROBLEM_VARS = {
  cms_malformed: [],
  digest_mismatch: [],
  signature_invalid: [],
  signer_cert_missing: [],
  ess_cert_mismatch: [],
  timestamp_missing: [],
  timestamp_invalid: [],
  timestamp_imprint_mismatch: [],
  chain_incomplete: ['subject'],
  cert_expired: ['subject', 'not_after'],
  cert_not_yet_valid: ['subject', 'not_before'],
  cert_revoked: ['subject', 'revoked_at'],
  revocation_unknown: ['subject'],
  wrong_key_usage: ['subject'],
  weak_algorithm: ['algorithm'],
  unsupported_algorithm: ['algorithm'],
  // What the PDF around the signatures shows (documents/pdf/signatures.ts).
  byte_range_invalid: [],
  not_signed: [],
  changed_page: ['object'],
  changed_annotation: ['object'],
  changed_object: ['object'],
  deleted_object: ['object'],
} as const satisfies Record<string, readonly string[]>;

export type ProblemCode = keyof typeof PROBLEM_VARS;
export type Problem = { code: ProblemCode; vars?: Record<string, string> };

type VarsOf<C extends ProblemCode> = Record<(typeof PROBLEM_VARS)[C][number], string>;

/** A problem whose variables are exactly those its code declares. */
export function problem<C extends ProblemCode>(
  code: C,
  ...vars: (typeof PROBLEM_VARS)[C] extends readonly [] ? [] : [VarsOf<C>]
): Problem {
  return vars.length > 0 ? { code, vars: { ...vars[0] } } : { code };
}

// Every code must have a catalogue key: a code without one makes this line fail to compile.
const keyed: `verify.problem.${ProblemCode}` extends MessageKey ? true : never = true;
void keyed;

/** The problem in words, in `locale`. */
export const problemText = (locale: Locale, p: Problem): string =>
  t(locale, `verify.problem.${p.code}` satisfies MessageKey, p.vars);

/** Appends `p` unless an equal problem is already listed. */
export function addProblem(list: Problem[], p: Problem): void {
  const same = (q: Problem) => q.code === p.code && JSON.stringify(q.vars ?? {}) === JSON.stringify(p.vars ?? {});
  if (!list.some(same)) list.push(p);
}
