// The send form of /dashboard/send as data: what a person typed (kept as typed, so a refused form comes back as it
// was), the fields they placed, the checks the dashboard owns (a field off its page, two fields overlapping, a field
// with no signer: the API allows overlaps, the editor does not), and the API body the form maps to. The API's own
// rules are not repeated here: `toCreateBody` maps, and signing/create.ts refuses.
import { FIELD_TYPES } from '../documents/pdf/types.js';
import { MAX_FIELDS, MAX_SIGNERS } from '../limits.js';
import type { CreateBody } from '../signing/signing.schemas.js';

export type SignerRow = {
  name: string;
  email: string;
  phone: string;
  role: string;
  order: string;
  verification: string;
};
export type SendForm = {
  title: string;
  message: string;
  locale: string;
  order: string;
  /** `YYYY-MM-DD` or empty (the API's default). */
  expires: string;
  /** `default` (the workspace's), `none` or `custom` (after_days, every_days). */
  reminders: string;
  after_days: string;
  every_days: string;
  signers: SignerRow[];
};
/** A placed field: its signer is an index into the form's signer rows; the box is in PDF points, top-left origin. */
export type DraftField = {
  signer: number;
  type: string;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  required: boolean;
  label?: string;
};
export type PageSize = { width: number; height: number };

/** A problem of a placed field; `other` is the field it overlaps. */
export type FieldProblem = { field: number; code: 'off_page' | 'overlap' | 'no_signer' | 'bad_type'; other?: number };

const MAX_TEXT = 2000;
const str = (v: unknown, max = 200): string => (typeof v === 'string' ? v.slice(0, max) : '');
const VERIFICATIONS = ['none', 'email_code', 'sms_code'] as const;
export const PALETTE = FIELD_TYPES;

export const emptySigner = (): SignerRow => ({
  name: '',
  email: '',
  phone: '',
  role: '',
  order: '',
  verification: 'none',
});

export const emptyForm = (locale: string): SendForm => ({
  title: '',
  message: '',
  locale,
  order: 'parallel',
  expires: '',
  reminders: 'default',
  after_days: '',
  every_days: '',
  signers: [emptySigner()],
});

const blankSigner = (s: SignerRow) => !s.name.trim() && !s.email.trim() && !s.phone.trim();

/** The form from flat fields (`signers.0.name`, …) as a browser posts them, or from the editor's JSON. */
export function readForm(body: Record<string, unknown>): SendForm {
  const rows: SignerRow[] = [];
  for (let i = 0; i < MAX_SIGNERS; i++) {
    const at = (k: string) => body[`signers.${i}.${k}`];
    if (at('name') === undefined && at('email') === undefined) break;
    rows.push({
      name: str(at('name')),
      email: str(at('email'), 254),
      phone: str(at('phone'), 40),
      role: str(at('role'), 64),
      order: str(at('order'), 4),
      verification: VERIFICATIONS.find((v) => v === at('verification')) ?? 'none',
    });
  }
  // Blank rows are the form's spare rows: kept only where a later row is filled, so indices of fields hold.
  while (rows.length > 1 && blankSigner(rows[rows.length - 1]!)) rows.pop();
  return {
    title: str(body.title),
    message: str(body.message, MAX_TEXT),
    locale: str(body.locale, 35),
    order: body.order === 'sequential' ? 'sequential' : 'parallel',
    expires: str(body.expires, 10),
    reminders: ['none', 'custom'].includes(str(body.reminders)) ? str(body.reminders) : 'default',
    after_days: str(body.after_days, 4),
    every_days: str(body.every_days, 4),
    signers: rows.length ? rows : [emptySigner()],
  };
}

/** The editor's JSON form (same names, nested): flattened so one reader serves both. */
export function flattenForm(form: unknown): Record<string, unknown> {
  if (typeof form !== 'object' || form === null) return {};
  const f = form as Record<string, unknown>;
  const out: Record<string, unknown> = { ...f };
  delete out.signers;
  const signers = Array.isArray(f.signers) ? f.signers.slice(0, MAX_SIGNERS) : [];
  signers.forEach((s: Record<string, unknown>, i) => {
    for (const k of ['name', 'email', 'phone', 'role', 'order', 'verification'])
      out[`signers.${i}.${k}`] = s && typeof s === 'object' ? (s[k] ?? '') : '';
  });
  return out;
}

const num = (v: unknown): number => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.round(n * 100) / 100 : NaN;
};

/** Fields from the editor's JSON, or from the no-script table (`fields.0.x`, …; a row without a type is spare). */
export function readFields(body: Record<string, unknown>): DraftField[] | { bad: number } {
  let list: unknown[] = [];
  if (typeof body.fields_json === 'string' && body.fields_json !== '') {
    try {
      const parsed: unknown = JSON.parse(body.fields_json);
      list = Array.isArray(parsed) ? parsed : [];
    } catch {
      return { bad: 0 };
    }
  } else if (Array.isArray(body.fields)) {
    list = body.fields;
  } else {
    for (let i = 0; i <= MAX_FIELDS; i++) {
      const at = (k: string) => body[`fields.${i}.${k}`];
      if (at('type') === undefined) break;
      if (at('type') === '' || at('remove') === 'on') continue;
      const row: Record<string, unknown> = {};
      for (const k of ['signer', 'type', 'page', 'x', 'y', 'width', 'height', 'label']) row[k] = at(k);
      row.required = at('required') === 'on';
      list.push(row);
    }
  }
  const out: DraftField[] = [];
  for (const [i, raw] of list.slice(0, MAX_FIELDS).entries()) {
    const f = (raw ?? {}) as Record<string, unknown>;
    const d: DraftField = {
      signer: num(f.signer),
      type: str(f.type, 20),
      page: num(f.page),
      x: num(f.x),
      y: num(f.y),
      width: num(f.width),
      height: num(f.height),
      required: f.required === true || f.required === 'on',
      ...(typeof f.label === 'string' && f.label.trim() ? { label: f.label.trim().slice(0, 200) } : {}),
    };
    if ([d.signer, d.page, d.x, d.y, d.width, d.height].some(Number.isNaN)) return { bad: i };
    out.push(d);
  }
  return out;
}

const EPS = 0.01;
const overlaps = (a: DraftField, b: DraftField) =>
  a.page === b.page &&
  a.x < b.x + b.width - EPS &&
  b.x < a.x + a.width - EPS &&
  a.y < b.y + b.height - EPS &&
  b.y < a.y + a.height - EPS;

/** What blocks sending, field by field (field-editor.js shows the same before anything is posted). */
export function fieldProblems(fields: DraftField[], pages: PageSize[], form: SendForm): FieldProblem[] {
  const out: FieldProblem[] = [];
  fields.forEach((f, i) => {
    const p = pages[f.page - 1];
    if (!(PALETTE as readonly string[]).includes(f.type)) out.push({ field: i, code: 'bad_type' });
    const s = form.signers[f.signer];
    if (!Number.isInteger(f.signer) || !s || blankSigner(s)) out.push({ field: i, code: 'no_signer' });
    if (
      !p ||
      f.width <= 0 ||
      f.height <= 0 ||
      f.x < -EPS ||
      f.y < -EPS ||
      f.x + f.width > p.width + EPS ||
      f.y + f.height > p.height + EPS
    )
      out.push({ field: i, code: 'off_page' });
    const other = fields.findIndex((g, j) => j !== i && overlaps(f, g));
    if (other >= 0) out.push({ field: i, code: 'overlap', other });
  });
  return out;
}

/** Each row's API role: as typed, else `signer<n>` by its row. */
export const roleOf = (s: SignerRow, i: number): string => s.role.trim() || `signer${i + 1}`;

/** The rows that name someone, in signing order (the order column, then the rows' order), with their row index. */
export function signersInOrder(form: SendForm): { row: SignerRow; index: number }[] {
  const rank = (s: SignerRow) => (s.order.trim() === '' ? Infinity : Number(s.order));
  return form.signers
    .map((row, index) => ({ row, index }))
    .filter((x) => !blankSigner(x.row))
    .sort((a, b) => rank(a.row) - rank(b.row) || a.index - b.index);
}

/** The body of POST /v1/signing-requests the form and fields stand for (the file added by the caller). */
export function toCreateBody(form: SendForm, fields: DraftField[], file: CreateBody['file']): CreateBody {
  const signers = signersInOrder(form);
  const reminders =
    form.reminders === 'none'
      ? { reminders: null }
      : form.reminders === 'custom'
        ? { reminders: { after_days: Number(form.after_days), every_days: Number(form.every_days) } }
        : {};
  return {
    signers: signers.map(({ row, index }) => ({
      role: roleOf(row, index),
      email: row.email.trim(),
      name: row.name.trim(),
      ...(row.phone.trim() ? { phone: row.phone.trim() } : {}),
      ...(row.verification !== 'none' ? { verification: row.verification as 'email_code' | 'sms_code' } : {}),
    })),
    file,
    placement: 'coordinates',
    fields: fields.map((f) => ({
      role: roleOf(form.signers[f.signer]!, f.signer),
      type: f.type as NonNullable<CreateBody['fields']>[number]['type'],
      page: f.page,
      x: f.x,
      y: f.y,
      width: f.width,
      height: f.height,
      // The API takes `required` and `label` on text and checkbox fields only; the others are always required.
      ...(f.type === 'text' || f.type === 'checkbox'
        ? { required: f.required, ...(f.label ? { label: f.label } : {}) }
        : {}),
    })),
    signing_order: form.order === 'sequential' ? 'sequential' : 'parallel',
    ...(form.title.trim() ? { title: form.title.trim() } : {}),
    ...(form.message.trim() ? { message: form.message.trim() } : {}),
    ...(form.locale ? { locale: form.locale } : {}),
    ...(form.expires ? { expires_at: `${form.expires}T23:59:59.000Z` } : {}),
    ...reminders,
  };
}

/** Where an API refusal points, as the form's name for it (`signers.1.email`, `fields.3`), or null. */
export function formPathOf(apiField: unknown, order: { index: number }[]): string | null {
  if (typeof apiField !== 'string') return null;
  const s = /^signers\[(\d+)\](?:\.(\w+))?/.exec(apiField);
  if (s) {
    const row = order[Number(s[1])]?.index;
    return row === undefined ? null : `signers.${row}${s[2] ? `.${s[2]}` : ''}`;
  }
  const f = /^(?:placement\.)?fields\[(\d+)\]/.exec(apiField);
  if (f) return `fields.${f[1]}`;
  return /^[a-z_]+$/.test(apiField) ? apiField : null;
}
