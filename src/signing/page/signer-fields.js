// The signer page's fields area (rendered by field-inputs.ts): checks each value by the rules the server applies
// (documents/fields.ts; the server checks again and its 422 problems land on the same error lines), shows each
// problem next to its input (the line its aria-describedby names), and previews values in the boxes over the PDF.
// Values go out typed as the API takes them: numbers as numbers, checkboxes as booleans, dates as YYYY-MM-DD.

let S = {};
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
const byId = new Map(); // field id -> { field, input, error, overlay }

/** Whether the signer fills this field in (the same rule as signerInputOf on the server). */
export function isInput(f) {
  if (f.type === 'signature' || f.type === 'initials') return false;
  if (f.rules) return true;
  return f.type === 'text' || f.type === 'checkbox';
}

const ruleOf = (f) => ({ required: f.rules ? f.rules.required === true : f.type === 'text', ...(f.rules || {}) });

/** Binds the server-rendered inputs; `onChange` runs after any edit. */
export function initFields(strings, fields, onChange) {
  S = strings;
  for (const f of fields.filter(isInput)) {
    const input = document.getElementById(`field-${f.id}`);
    if (!input) continue;
    const entry = { field: f, input, error: document.getElementById(`field-${f.id}-error`), overlay: null };
    byId.set(f.id, entry);
    const changed = () => {
      setProblem(entry, null);
      preview(entry);
      onChange();
    };
    input.addEventListener('input', changed);
    input.addEventListener('change', changed);
  }
}

/** The box drawn over the PDF for an input field: shows the value, and takes the signer to its input. */
export function overlayFor(f) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'field-box';
  const entry = byId.get(f.id);
  const name = (entry && entry.input.labels[0]?.firstChild?.textContent.trim()) || S.text;
  const label = document.createElement('span');
  label.className = 'field-label';
  label.textContent = name;
  const value = document.createElement('span');
  value.className = 'field-value';
  b.append(label, value);
  b.setAttribute('aria-label', name);
  b.addEventListener('click', () => focusInput(f.id));
  if (entry) {
    entry.overlay = { box: b, value, name };
    preview(entry);
  }
  return b;
}

export function focusInput(id) {
  const e = byId.get(id);
  if (!e) return;
  e.input.scrollIntoView({ behavior: 'smooth', block: 'center' });
  e.input.focus({ preventScroll: true });
}

function shown(e) {
  const i = e.input;
  if (e.field.type === 'checkbox') return i.checked ? '✓' : '';
  return i.value.trim();
}

function preview(e) {
  if (!e.overlay) return;
  const text = shown(e);
  e.overlay.value.textContent = text;
  // The accessible name starts with what the box shows, then says which field it is.
  e.overlay.box.setAttribute('aria-label', text ? `${text} · ${e.overlay.name}` : e.overlay.name);
  e.overlay.box.closest('.field')?.classList.toggle('filled', text !== '');
}

/** The field's value as sent, or undefined when not given. */
function valueOf(e) {
  const i = e.input;
  if (e.field.type === 'checkbox') return i.checked;
  if (e.field.type === 'number') {
    if (i.validity && i.validity.badInput) return NaN;
    const t = i.value.trim();
    return t === '' ? undefined : Number(t);
  }
  const t = i.value.trim();
  return t === '' ? undefined : t;
}

/** A problem code (the server's) for one value, or null. */
function check(e, v) {
  const f = e.field;
  const r = ruleOf(f);
  const missing = v === undefined || (f.type === 'checkbox' && v === false);
  if (missing) return r.required ? 'field_required' : null;
  if (f.type === 'checkbox') return null;
  if (f.type === 'number') {
    if (typeof v !== 'number' || !Number.isFinite(v)) return 'invalid_type';
    if ((r.min !== undefined && v < r.min) || (r.max !== undefined && v > r.max)) return 'out_of_range';
    return null;
  }
  if (f.type === 'date') return /^\d{4}-\d{2}-\d{2}$/.test(v) && !e.input.validity.badInput ? null : 'invalid_type';
  if (f.type === 'enum') return (r.options || []).includes(v) ? null : 'invalid_enum';
  if ([...v].length > (r.max_length || 1000)) return 'too_long';
  if (f.type === 'email' && (e.input.validity.typeMismatch || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)))
    return 'pattern_mismatch';
  if (r.pattern !== undefined) {
    try {
      if (!new RegExp(`^(?:${r.pattern})$`, 'u').test(v)) return 'pattern_mismatch';
    } catch {
      // the server refused patterns it cannot compile when the template was published
    }
  }
  return null;
}

function messageFor(e, code) {
  const f = e.field;
  const r = ruleOf(f);
  switch (code) {
    case 'field_required':
      return f.type === 'checkbox' ? S.problemTick : f.type === 'enum' ? S.problemChoice : S.problemRequired;
    case 'invalid_type':
      return f.type === 'number' ? S.problemNumber : f.type === 'date' ? S.problemDate : S.problemRequired;
    case 'invalid_enum':
      return S.problemChoice;
    case 'too_long':
      return fill(S.problemTooLong, { max: r.max_length || 1000 });
    case 'out_of_range': {
      const v = valueOf(e);
      return r.min !== undefined && v < r.min ? fill(S.problemMin, { min: r.min }) : fill(S.problemMax, { max: r.max });
    }
    case 'pattern_mismatch':
      return f.type === 'email' ? S.problemEmail : S.problemPattern;
    default:
      return S.errorGeneric;
  }
}

function setProblem(e, code) {
  e.error.textContent = code ? messageFor(e, code) : '';
  if (code) e.input.setAttribute('aria-invalid', 'true');
  else e.input.removeAttribute('aria-invalid');
  e.input.closest('.input-row')?.classList.toggle('invalid', Boolean(code));
}

/** Every value, checked: `values` to send and `problems` ({field, code}) in reading order. */
export function readValues() {
  const values = {};
  const problems = [];
  for (const [id, e] of byId) {
    const v = valueOf(e);
    const code = check(e, v);
    if (code) problems.push({ field: id, code });
    if (v !== undefined) values[id] = v;
  }
  return { values, problems };
}

/**
 * Shows problems (the page's own or a 422's meta.problems) next to their inputs and focuses the first; returns
 * whether any could be placed next to an input.
 */
export function showProblems(problems) {
  let first = null;
  for (const p of problems) {
    const e = byId.get(p.field);
    if (!e) continue;
    setProblem(e, p.code);
    first = first || e;
  }
  if (first) focusInput(first.field.id);
  return first !== null;
}
