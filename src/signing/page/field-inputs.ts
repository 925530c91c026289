// The signer page's fields area: one labelled input per field the signer fills in, rendered on the server from the
// same definitions (documents/fields.ts signerInputOf) the server checks submitted values against, with the rules as
// HTML attributes (required, maxlength, pattern, min, max, options). Each input names its error line with
// aria-describedby; signer-fields.js fills those lines and previews the values over the PDF.
import { signerInputOf } from '../../documents/fields.js';
import type { Field } from '../../documents/pdf/types.js';
import type { Strings } from '../../i18n/i18n.js';
import { esc } from '../../web/html.js';

type S = Strings<'page'>;

const TYPE_WORD: Record<string, keyof S> = {
  text: 'text',
  number: 'number',
  date: 'date',
  checkbox: 'checkbox',
  enum: 'choice',
  email: 'email',
};

/** The fields a signer fills in, in reading order (page, then top to bottom, then left to right). */
export const inputFields = (fields: Field[]): Field[] =>
  fields.filter((f) => signerInputOf(f) !== null).sort((a, b) => a.page - b.page || a.y - b.y || a.x - b.x);

/** The visible name of a field: its label, else the word for its type. */
export const fieldName = (f: Field, s: S): string => f.rules?.label ?? s[TYPE_WORD[f.type] ?? 'text'];

const attr = (name: string, value: string | number | undefined) =>
  value === undefined ? '' : ` ${name}="${esc(String(value))}"`;

function control(f: Field, s: S, id: string, described: string): string {
  const rule = signerInputOf(f)!;
  const common = `id="${id}" name="${esc(f.id)}" data-field="${esc(f.id)}" aria-describedby="${described}"${rule.required ? ' required aria-required="true"' : ''}`;
  switch (f.type) {
    case 'checkbox':
      return `<input type="checkbox" value="true" ${common}>`;
    case 'enum': {
      const options = (rule.options ?? []).map((o) => `<option value="${esc(o)}">${esc(o)}</option>`).join('');
      return `<select ${common}><option value="">${esc(s.chooseOption)}</option>${options}</select>`;
    }
    case 'number':
      return `<input type="number" step="any" inputmode="decimal" ${common}${attr('min', rule.min)}${attr('max', rule.max)}>`;
    case 'date':
      return `<input type="date" ${common}>`;
    case 'email':
      return `<input type="email" autocomplete="email" spellcheck="false" ${common}${attr('maxlength', rule.max_length)}${attr('pattern', rule.pattern)}>`;
    default:
      return `<input type="text" ${common}${attr('maxlength', rule.max_length ?? 1000)}${attr('pattern', rule.pattern)}>`;
  }
}

/** The fieldset, or '' when the signer has nothing to fill in. */
export function renderFieldInputs(fields: Field[], s: S): string {
  const list = inputFields(fields);
  if (list.length === 0) return '';
  const rows = list.map((f) => {
    const id = `field-${f.id}`;
    const error = `${id}-error`;
    const required = signerInputOf(f)!.required;
    const mark = required
      ? ` <span class="field-required" aria-hidden="true">*</span><span class="sr-only"> (${esc(s.required)})</span>`
      : ` <span class="field-optional">(${esc(s.optional)})</span>`;
    const label = `<label for="${id}">${esc(fieldName(f, s))}${mark}</label>`;
    const input = control(f, s, id, error);
    const body = f.type === 'checkbox' ? `${input} ${label}` : `${label}${input}`;
    return `<div class="input-row input-${esc(f.type)}" data-input-for="${esc(f.id)}">${body}<p class="field-error" id="${error}"></p></div>`;
  });
  return `<fieldset class="fields-box" id="fields-box">
        <legend>${esc(s.yourFields)}</legend>
        ${rows.join('\n        ')}
      </fieldset>`;
}
