// Field value rules, pure (no database, no I/O): the one place that says whether a value fits a field, used for the
// sender's template values (templates/fields.ts) and for what a signer submits (signing/signing.service.ts).
// Guarantees: every problem of a submission is reported at once, each with its own catalogue code; only values that
// passed are turned into the text stamped on the PDF; a rule a definition could not have (an unsafe pattern, a min
// over max) is refused when the definition is made, so checking here never throws.
import { isEmailAddress } from '../lib/email.js';
import { apiError, type ApiError } from '../lib/errors.js';
import { MAX_FIELD_VALUE_LENGTH } from '../limits.js';
import type { Field } from './pdf/types.js';

export type ProblemCode =
  | 'field_required'
  | 'invalid_enum'
  | 'invalid_type'
  | 'unknown_field'
  | 'too_long'
  | 'pattern_mismatch'
  | 'out_of_range'
  | 'readonly_field';
export type FieldProblem = { field: string; code: ProblemCode; message: string };

/** What a field's value must satisfy; `type` is the field's own (signature and initials never take a value). */
export type ValueRule = {
  type: string;
  options?: string[];
  pattern?: string;
  min?: number;
  max?: number;
  max_length?: number;
};

/** A value is either a problem, or the text stamped for it ('' = nothing to stamp). */
export type Checked = { text: string } | { code: ProblemCode; message: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Beyond this many options an error message names their count instead of listing them. */
const LISTED_OPTIONS = 10;

/** Not given: absent, null, or a string that is empty after trimming. */
export const isBlank = (v: unknown): boolean =>
  v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

/** The type and value rules of one given (non-blank) value; `subject` names it in messages. */
export function checkValue(f: ValueRule, value: unknown, subject: string): Checked {
  const wrong = (code: ProblemCode, message: string): Checked => ({ code, message: `${subject} ${message}` });
  switch (f.type) {
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return wrong('invalid_type', 'must be a number.');
      if (f.min !== undefined && value < f.min) return wrong('out_of_range', `must be at least ${f.min}.`);
      if (f.max !== undefined && value > f.max) return wrong('out_of_range', `must be at most ${f.max}.`);
      return { text: String(value) };
    }
    case 'checkbox':
      if (typeof value !== 'boolean') return wrong('invalid_type', 'must be true or false.');
      return { text: value ? '✓' : '' };
    case 'text':
    case 'email':
    case 'enum':
    case 'date': {
      if (typeof value !== 'string') return wrong('invalid_type', 'must be a string.');
      const s = value.trim();
      if (f.type === 'enum') {
        const options = f.options ?? [];
        if (options.includes(s)) return { text: s };
        const list =
          options.length <= LISTED_OPTIONS
            ? `one of: ${options.map((o) => JSON.stringify(o)).join(', ')}`
            : `one of the field's ${options.length} options`;
        return wrong('invalid_enum', `must be ${list}.`);
      }
      if (f.type === 'date')
        return isCalendarDate(s) ? { text: s } : wrong('invalid_type', 'must be a date (YYYY-MM-DD).');
      const max = f.max_length ?? MAX_FIELD_VALUE_LENGTH;
      if ([...s].length > max) return wrong('too_long', `is longer than ${max} characters.`);
      if (f.type === 'email' && !isEmailAddress(s)) return wrong('pattern_mismatch', 'is not an e-mail address.');
      if (f.pattern !== undefined && !new RegExp(`^(?:${f.pattern})$`, 'u').test(s))
        return wrong('pattern_mismatch', "does not match the field's pattern.");
      return { text: s };
    }
    default:
      // signature and initials are drawn by their recipient: they never take a value.
      return wrong('invalid_type', 'cannot be given a value.');
  }
}

/** A required checkbox must be ticked: `false` counts as not given for it. */
export const isMissing = (type: string, v: unknown) => isBlank(v) || (type === 'checkbox' && v === false);

/**
 * The rules of a document field its signer fills in, or null for a field the signer does not type (signature,
 * initials, the date of signing). Documents from before typed fields carry no `rules`: their text fields were
 * always required by the page, and are now by the server too.
 */
export function signerInputOf(f: Field): (ValueRule & { required: boolean; label?: string }) | null {
  if (f.type === 'signature' || f.type === 'initials') return null;
  const r = f.rules;
  if (!r) {
    if (f.type === 'text') return { type: 'text', required: true };
    if (f.type === 'checkbox') return { type: 'checkbox', required: false };
    return null; // a `date` without rules is the date of signing, stamped by the server
  }
  return { ...r, type: f.type, required: r.required === true };
}

/** A signer's submitted value, as stored and stamped: the value as given (trimmed) and its stamp text. */
export type SignerValue = { value: string | number | boolean; text: string };

/**
 * Checks what a signer submitted for their fields: every problem (in field order, then unknown ids as given) and,
 * when there is none, the accepted values by field id. A direct POST meets exactly the checks the page makes.
 */
export function checkSignerValues(
  fields: Field[],
  given: Record<string, unknown> | undefined,
): { values: Record<string, SignerValue>; problems: FieldProblem[] } {
  const values = given ?? {};
  const problems: FieldProblem[] = [];
  const accepted: [string, SignerValue][] = [];
  const own = new Map(fields.map((f) => [f.id, f]));
  for (const f of fields) {
    const rule = signerInputOf(f);
    const value = Object.hasOwn(values, f.id) ? values[f.id] : undefined;
    const subject = `fields.${f.id}`;
    const problem = (code: ProblemCode, message: string) => problems.push({ field: f.id, code, message });
    if (!rule) {
      if (!isBlank(value)) problem('readonly_field', `${subject} is filled in by Signet, not by the signer.`);
      continue;
    }
    if (isMissing(rule.type, value)) {
      if (rule.required) problem('field_required', `${subject}${rule.label ? ` (${rule.label})` : ''} is required.`);
      else if (value === false) accepted.push([f.id, { value: false, text: '' }]);
      continue;
    }
    const checked = checkValue(rule, value, subject);
    if ('code' in checked) problem(checked.code, checked.message);
    else
      accepted.push([
        f.id,
        { value: typeof value === 'string' ? value.trim() : (value as number | boolean), ...checked },
      ]);
  }
  for (const id of Object.keys(values)) {
    if (!own.has(id))
      problems.push({ field: id, code: 'unknown_field', message: `fields.${id} is not a field of this signer.` });
  }
  return { values: Object.fromEntries(accepted), problems };
}

/** The text stamped for a stored, accepted value: a ticked checkbox is ✓, an unticked one or none is ''. */
export function stampText(value: unknown): string {
  if (typeof value === 'boolean') return value ? '✓' : '';
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' ? value : '';
}

/** The 422 for values that failed: the first problem in the message, all of them in meta. */
export function templateInputError(problems: FieldProblem[]): ApiError {
  const n = problems.length;
  const first = problems[0];
  if (first === undefined) return apiError('template_input_invalid', { meta: { problems: [] } });
  const rest = n > 1 ? ` See meta.problems for the other ${n - 1}.` : '';
  return apiError('template_input_invalid', {
    message: `${n} field value${n === 1 ? ' is' : 's are'} invalid: ${first.message}${rest}`,
    meta: { problems: problems.map(({ field, code, message }) => ({ field, code, message })) },
  });
}
