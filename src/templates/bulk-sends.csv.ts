// A bulk send's CSV, pure (no I/O): RFC 4180 records (quoted fields with "" escapes and line breaks, CRLF or LF),
// UTF-8 with or without a BOM, then the header mapped onto a template version: `<slot>.name`, `<slot>.email`,
// `<slot>.phone`, `<slot>.channel` and the sender fields' keys. Guarantees: whatever cannot be read as a whole (not
// UTF-8, broken quoting, a header naming no column of the version) is one 400 for the upload; a data row that is
// read but does not fit (wrong number of cells, a value too long) is that row's problem alone, so the rows around
// it keep their numbers and are sent.
import { apiError } from '../lib/errors.js';
import { MAX_BULK_ROWS } from '../limits.js';
import type { SlotOut, TemplateFieldOut } from './templates.schemas.js';
import { SENDER_SLOT } from './templates.schemas.js';
import type { BulkRowIn, RowProblem } from './bulk-sends.schemas.js';

const csvError = (message: string, meta: Record<string, unknown> = {}) =>
  apiError('invalid_request', { message, meta: { field: 'body', ...meta } });

/** The body as text: strict UTF-8 (a Latin-1 export is refused rather than read as mojibake), BOM dropped. */
export function decodeCsv(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw csvError('The CSV is not UTF-8 text; save it as "CSV UTF-8".');
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The records of an RFC 4180 text, each an array of cells. Trailing empty lines are dropped; more than
 * `maxRecords` records stop the parse (the caller refuses the upload without reading the rest).
 */
export function parseCsv(text: string, maxRecords = MAX_BULK_ROWS + 1): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  const endRecord = () => {
    records.push(record);
    record = [];
    if (records.length > maxRecords) throw tooMany();
  };
  for (;;) {
    let cell = '';
    if (text[i] === '"') {
      const startLine = line;
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1) throw csvError(`A quoted cell opened on line ${startLine} is never closed.`, { line: startLine });
        const chunk = text.slice(i, q);
        line += chunk.split('\n').length - 1;
        cell += chunk;
        if (text[q + 1] === '"') {
          cell += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      if (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r')
        throw csvError(`Line ${line}: a quoted cell must end at a comma or the line's end.`, { line });
    } else {
      let j = i;
      while (j < n && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++;
      cell = text.slice(i, j);
      if (cell.includes('"'))
        throw csvError(`Line ${line}: a quote inside an unquoted cell; quote the cell and double the quote.`, { line });
      i = j;
    }
    record.push(cell);
    if (i >= n) {
      endRecord();
      break;
    }
    if (text[i] === ',') {
      i++;
      continue;
    }
    i += text[i] === '\r' && text[i + 1] === '\n' ? 2 : 1;
    line++;
    endRecord();
    if (i >= n) break;
  }
  while (records.length > 0 && records.at(-1)!.every((c) => c === '') && records.at(-1)!.length === 1) records.pop();
  return records;
}

export const tooMany = () =>
  apiError('invalid_request', {
    message: `A bulk send has at most ${MAX_BULK_ROWS} rows.`,
    meta: { field: 'rows', max: MAX_BULK_ROWS },
  });

const RECIPIENT_ATTRS = ['name', 'email', 'phone', 'channel'] as const;
type Column = { kind: 'recipient'; slot: string; attr: (typeof RECIPIENT_ATTRS)[number] } | TemplateFieldColumn;
type TemplateFieldColumn = { kind: 'field'; key: string; type: string };
/** The longest cell each recipient column takes (the instantiate body's limits). */
const MAX_CELL = { name: 200, email: 254, phone: 40, channel: 5 } as const;

/** What the header's columns mean for this version; every problem with the header is one 400. */
export function csvColumns(header: readonly string[], slots: readonly SlotOut[], fields: readonly TemplateFieldOut[]) {
  const senderFields = new Map(fields.filter((f) => f.slot === SENDER_SLOT).map((f) => [f.key, f]));
  const slotNames = new Set(slots.map((s) => s.name));
  const unknown: string[] = [];
  const seen = new Set<string>();
  const columns: Column[] = header.map((raw) => {
    const name = raw.trim();
    if (seen.has(name)) throw csvError(`The header names column "${name}" twice.`, { column: name });
    seen.add(name);
    const dot = name.lastIndexOf('.');
    const slot = name.slice(0, dot);
    const attr = name.slice(dot + 1) as (typeof RECIPIENT_ATTRS)[number];
    const isRecipient = dot > 0 && slotNames.has(slot) && (RECIPIENT_ATTRS as readonly string[]).includes(attr);
    const field = senderFields.get(name);
    if (isRecipient && field) throw csvError(`Column "${name}" names both a recipient and a field.`, { column: name });
    if (isRecipient) return { kind: 'recipient', slot, attr };
    if (field) return { kind: 'field', key: field.key, type: field.type };
    unknown.push(name);
    return { kind: 'field', key: name, type: '' };
  });
  if (unknown.length > 0) {
    const expected = [...slots.flatMap((s) => [`${s.name}.name`, `${s.name}.email`]), ...senderFields.keys()];
    throw csvError(
      `Unknown column(s) ${unknown.map((c) => `"${c}"`).join(', ')}; this version takes ${expected.join(', ')} ` +
        '(and <slot>.phone, <slot>.channel).',
      { columns: unknown },
    );
  }
  const withFields = new Set(fields.map((f) => f.slot));
  const missing = [
    ...slots.filter((s) => withFields.has(s.name) && !seen.has(`${s.name}.name`)).map((s) => `${s.name}.name`),
    ...[...senderFields.values()].filter((f) => f.required && !seen.has(f.key)).map((f) => f.key),
  ];
  if (missing.length > 0)
    throw csvError(`The header has no column ${missing.map((c) => `"${c}"`).join(', ')}.`, { columns: missing });
  return columns;
}

/** The header a version takes (csvColumns' inverse): each slot's four recipient columns, then the sender fields. */
export function exampleColumns(slots: readonly SlotOut[], fields: readonly TemplateFieldOut[]): string[] {
  return [
    ...slots.flatMap((s) => RECIPIENT_ATTRS.map((a) => `${s.name}.${a}`)),
    ...fields.filter((f) => f.slot === SENDER_SLOT && !f.readonly).map((f) => f.key),
  ];
}

/** A sender field's example cell: its default, else a value its type accepts. */
function exampleValue(f: TemplateFieldOut): string {
  if (f.default !== undefined) return String(f.default);
  if (f.options && f.options.length > 0) return f.options[0]!;
  const byType: Record<string, string> = { number: String(f.min ?? 1), date: '2026-01-31', checkbox: 'yes' };
  return byType[f.type] ?? (f.type === 'email' ? 'someone@example.com' : 'Example');
}

/** The example CSV of a version: the header and one row, each slot's person numbered (RFC 4180, CRLF). */
export function exampleCsv(slots: readonly SlotOut[], fields: readonly TemplateFieldOut[]): string {
  const byKey = new Map(fields.filter((f) => f.slot === SENDER_SLOT).map((f) => [f.key, f]));
  const row = exampleColumns(slots, fields).map((column) => {
    const field = byKey.get(column);
    if (field) return exampleValue(field);
    const [slot, attr] = [column.slice(0, column.lastIndexOf('.')), column.slice(column.lastIndexOf('.') + 1)];
    const n = slots.findIndex((s) => s.name === slot) + 1;
    return { name: `Person ${n}`, email: `person${n}@example.com`, phone: '', channel: 'email' }[attr] ?? '';
  });
  const quote = (c: string) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  return [exampleColumns(slots, fields), row].map((r) => r.map(quote).join(',')).join('\r\n') + '\r\n';
}

/** A cell as the field's value: numbers and checkboxes typed, blank cells left out (not given). */
function cellValue(type: string, cell: string): unknown {
  const s = cell.trim();
  if (type === 'number' && /^-?\d+(\.\d+)?$/.test(s)) return Number(s);
  if (type === 'checkbox') {
    if (/^(true|yes|1|x)$/i.test(s)) return true;
    if (/^(false|no|0)$/i.test(s)) return false;
  }
  return cell;
}

export type ReadRow = { input: BulkRowIn | null; problems?: RowProblem[] };

/** One data row as an instantiate body, or its problems (the checks instantiate makes come later, per row). */
export function csvRow(cells: readonly string[], columns: readonly Column[]): ReadRow {
  if (cells.length !== columns.length)
    return {
      input: null,
      problems: [
        {
          code: 'invalid_request',
          message: `The row has ${cells.length} cell(s); the header has ${columns.length} column(s).`,
        },
      ],
    };
  const problems: RowProblem[] = [];
  const people = new Map<string, Record<string, string>>();
  const values: Record<string, unknown> = {};
  columns.forEach((c, i) => {
    const cell = cells[i]!;
    if (c.kind === 'field') {
      if (cell.trim() !== '') values[c.key] = cellValue(c.type, cell);
      return;
    }
    const value = cell.trim();
    if (value === '') return;
    const column = `${c.slot}.${c.attr}`;
    if ([...value].length > MAX_CELL[c.attr])
      problems.push({
        code: 'invalid_request',
        field: column,
        message: `${column} is over ${MAX_CELL[c.attr]} characters.`,
      });
    else if (c.attr === 'channel' && value !== 'email' && value !== 'sms')
      problems.push({ code: 'invalid_request', field: column, message: `${column} must be "email" or "sms".` });
    const person = people.get(c.slot) ?? {};
    person[c.attr] = value;
    people.set(c.slot, person);
  });
  if (problems.length > 0) return { input: null, problems };
  const recipients = [...people].map(([slot, p]) => ({
    slot,
    name: p.name ?? '',
    ...(p.email ? { email: p.email } : {}),
    ...(p.phone ? { phone: p.phone } : {}),
    ...(p.channel ? { channel: p.channel as 'email' | 'sms' } : {}),
  }));
  return { input: { recipients, field_values: values } };
}
