// Template fields, pure (no database, no I/O). checkFieldDefinitions refuses at publish any definition that could
// never be instantiated (unknown slot, a signer without a signature field, an unsafe pattern, an invalid default);
// validateFieldValues then checks every sender value against the value rules (documents/fields.ts, the same rules
// a signer's values meet) and reports all problems at once; only values that passed are stamped on the PDF.
import safeRegex from 'safe-regex2';
import { checkValue, isBlank, type Checked, type FieldProblem, type ProblemCode } from '../documents/fields.js';
import type { Field } from '../documents/pdf/types.js';
import { apiError, type ApiError } from '../lib/errors.js';
import { SENDER_SLOT, type SlotIn, type TemplateFieldIn, type TemplateFieldType } from './templates.schemas.js';

/** Boxes smaller than this (points) could not hold a legible stamp. */
const MIN_BOX_SIDE = 5;

/** The box a template field is placed as (its size when anchored): value fields are placed like text. */
export function stampKind(type: TemplateFieldType): 'signature' | 'initials' | 'date' | 'text' {
  return type === 'signature' || type === 'initials' || type === 'date' ? type : 'text';
}

/** A recipient's field as its document keeps it: its own type, and the rules its signer's value must meet. */
export function recipientRules(f: TemplateFieldIn): Pick<Field, 'type' | 'rules'> {
  if (f.type === 'signature' || f.type === 'initials') return { type: f.type };
  const rules: NonNullable<Field['rules']> = { required: f.required === true };
  for (const k of ['label', 'pattern', 'max_length', 'options', 'min', 'max'] as const)
    if (f[k] !== undefined) Object.assign(rules, { [k]: f[k] });
  return { type: f.type, rules };
}

const invalid = (field: string, message: string): ApiError => apiError('invalid_request', { message, meta: { field } });

const TEXT_TYPES: readonly TemplateFieldType[] = ['text', 'email'];

/** Runs when a template version is published; throws the first problem found. */
export function checkFieldDefinitions(fields: TemplateFieldIn[], slots: SlotIn[]): void {
  const slotNames = new Set<string>();
  slots.forEach((s, i) => {
    if (s.name === SENDER_SLOT)
      throw invalid(`slots[${i}].name`, `slots[${i}].name cannot be "${SENDER_SLOT}": that name is the sender's.`);
    if (slotNames.has(s.name))
      throw invalid(`slots[${i}].name`, `slots[${i}].name "${s.name}" appears twice; slot names must be unique.`);
    slotNames.add(s.name);
  });

  const keys = new Set<string>();
  fields.forEach((f, i) => {
    const at = `fields[${i}]`;
    if (keys.has(f.key)) throw invalid(`${at}.key`, `${at}.key "${f.key}" appears twice; field keys must be unique.`);
    keys.add(f.key);
    const sender = f.slot === SENDER_SLOT;
    if (!sender && !slotNames.has(f.slot))
      throw apiError('unknown_role', {
        message: `${at}.slot "${f.slot}" is neither a declared slot nor "${SENDER_SLOT}".`,
        meta: { role: f.slot, field: f.key },
      });
    if (sender && (f.type === 'signature' || f.type === 'initials'))
      throw invalid(`${at}.type`, `${at}.type cannot be ${f.type} on a sender field: only recipients sign.`);
    checkPlacement(f, at);
    checkTypeProperties(f, at);
    checkReadonlyAndDefault(f, at, sender);
  });

  for (const slot of slotNames) {
    const own = fields.filter((f) => f.slot === slot);
    if (own.length > 0 && !own.some((f) => f.type === 'signature'))
      throw apiError('signer_has_no_anchor', {
        message: `Slot "${slot}" has fields but no signature field; every signer must sign.`,
        meta: { role: slot },
      });
  }
}

function checkPlacement(f: TemplateFieldIn, at: string): void {
  const coordinates = f.page !== undefined || f.box !== undefined;
  if (f.anchor !== undefined && coordinates)
    throw invalid(`${at}.anchor`, `${at} has both an anchor and page/box; give exactly one placement.`);
  if (f.anchor === undefined && !coordinates)
    throw invalid(`${at}.anchor`, `${at} has no placement; give an anchor, or a page together with a box.`);
  if (f.anchor !== undefined) return;
  if (f.page === undefined || f.box === undefined)
    throw invalid(`${at}.box`, `${at} needs both page and box for a placement by coordinates.`);
  const { x, y, width, height } = f.box;
  if (![x, y, width, height].every(Number.isFinite) || x < 0 || y < 0)
    throw invalid(`${at}.box`, `${at}.box must have finite coordinates, x and y at least 0.`);
  if (width < MIN_BOX_SIDE || height < MIN_BOX_SIDE)
    throw invalid(`${at}.box`, `${at}.box must be at least ${MIN_BOX_SIDE} points wide and high.`);
}

function checkTypeProperties(f: TemplateFieldIn, at: string): void {
  if (f.type === 'enum') {
    if (f.options === undefined || f.options.length === 0)
      throw invalid(`${at}.options`, `${at}.options must list the choices of an enum field.`);
    if (f.options.some((o) => o.trim() === '' || o !== o.trim()))
      throw invalid(`${at}.options`, `${at}.options must not be blank or start or end with spaces.`);
    if (new Set(f.options).size !== f.options.length)
      throw invalid(`${at}.options`, `${at}.options must list each option once.`);
  } else if (f.options !== undefined) {
    throw invalid(`${at}.options`, `${at}.options is only allowed on enum fields.`);
  }

  if (f.pattern !== undefined) {
    if (!TEXT_TYPES.includes(f.type))
      throw invalid(`${at}.pattern`, `${at}.pattern is only allowed on text and email fields.`);
    try {
      new RegExp(f.pattern, 'u');
    } catch {
      throw invalid(`${at}.pattern`, `${at}.pattern is not a valid regular expression (with the u flag).`);
    }
    if (!safeRegex(f.pattern))
      throw invalid(
        `${at}.pattern`,
        `${at}.pattern is refused: nested or too many repetitions could make matching take exponential time.`,
      );
  }

  for (const bound of ['min', 'max'] as const) {
    const v = f[bound];
    if (v === undefined) continue;
    if (f.type !== 'number') throw invalid(`${at}.${bound}`, `${at}.${bound} is only allowed on number fields.`);
    if (!Number.isFinite(v)) throw invalid(`${at}.${bound}`, `${at}.${bound} must be a finite number.`);
  }
  if (f.min !== undefined && f.max !== undefined && f.min > f.max)
    throw invalid(`${at}.max`, `${at}.max must not be below ${at}.min.`);

  if (f.max_length !== undefined && !TEXT_TYPES.includes(f.type))
    throw invalid(`${at}.max_length`, `${at}.max_length is only allowed on text and email fields.`);
}

function checkReadonlyAndDefault(f: TemplateFieldIn, at: string, sender: boolean): void {
  if (f.readonly === true && !sender)
    throw invalid(`${at}.readonly`, `${at}.readonly is only allowed on sender fields; recipients fill their own.`);
  if (f.readonly === true && f.default === undefined)
    throw invalid(`${at}.readonly`, `${at} is read-only, so it needs a default.`);
  if (f.default === undefined) return;
  if (f.type === 'signature' || f.type === 'initials')
    throw invalid(`${at}.default`, `${at}.default is not allowed on ${f.type} fields.`);
  if (!sender)
    throw invalid(`${at}.default`, `${at}.default is only allowed on sender fields; recipients fill their own.`);
  if (typeof f.default === 'string' && f.default.trim() === '')
    throw invalid(`${at}.default`, `${at}.default is empty; leave it out instead.`);
  const checked = checkValue(f, f.default, `${at}.default`);
  if ('code' in checked) throw invalid(`${at}.default`, checked.message);
}

/**
 * Checks `field_values` against a published template's fields: every problem (one per key, in template field order,
 * then unknown keys in the order given), and the text to stamp for each sender field that has a value.
 */
export function validateFieldValues(
  fields: TemplateFieldIn[],
  values: Record<string, unknown> | undefined,
): { resolved: Record<string, string>; problems: FieldProblem[] } {
  const given = values ?? {};
  const problems: FieldProblem[] = [];
  const resolved: [string, string][] = [];
  const byKey = new Map(fields.map((f) => [f.key, f]));

  for (const f of fields) {
    const subject = `field_values.${f.key}`;
    const value = Object.hasOwn(given, f.key) ? given[f.key] : undefined;
    const problem = (code: ProblemCode, message: string) => problems.push({ field: f.key, code, message });
    if (f.slot !== SENDER_SLOT) {
      if (!isBlank(value))
        problem('readonly_field', `${subject} belongs to slot "${f.slot}"; its recipient fills it when signing.`);
      continue;
    }
    if (f.readonly === true && !isBlank(value)) {
      problem('readonly_field', `${subject} is read-only; it always takes the template's default.`);
      continue;
    }
    let checked: Checked;
    if (!isBlank(value)) checked = checkValue(f, value, subject);
    else if (f.default !== undefined) checked = checkValue(f, f.default, subject);
    else {
      if (f.required === true) problem('field_required', `${subject} is required.`);
      continue;
    }
    // A required checkbox must end up ticked, whether by the value or by the default.
    if (f.type === 'checkbox' && f.required === true && 'text' in checked && checked.text === '')
      problem('field_required', `${subject} is required: it must be ticked.`);
    else if ('code' in checked) problem(checked.code, checked.message);
    else if (checked.text !== '') resolved.push([f.key, checked.text]);
  }

  for (const key of Object.keys(given)) {
    if (!byKey.has(key))
      problems.push({
        field: key,
        code: 'unknown_field',
        message: `field_values.${key} is not a field of this template.`,
      });
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays an ordinary entry.
  return { resolved: Object.fromEntries(resolved), problems };
}
