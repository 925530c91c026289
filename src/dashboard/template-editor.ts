// Creating a template and publishing a version from the dashboard. The form is a table of slots and fields (works
// without JavaScript); `definitionFromJson` is the seam a visual editor plugs into: it posts the same definition as
// JSON in the `definition` field, which then replaces the table. Either way the definition goes through the API's
// own schema (CreateTemplateBody / VersionBody) and then createTemplate / publishVersion, so the rules (field types,
// anchors, boxes on the page) are the API's alone. An uploaded PDF is kept as an `upload/…` blob (a random,
// unguessable key) between the upload step and the publish step, so the person never uploads twice; the key's kind
// names the workspace (`uploadKind`), so one workspace can neither read nor publish another's upload.
import { createHash } from 'node:crypto';
import Schema from 'typebox/schema';
import { apiError, ApiError } from '../lib/errors.js';
import { MAX_FIELDS, MAX_SIGNERS } from '../limits.js';
import { ANCHOR_FIELD_MIN } from '../documents/pdf/placement.js';
import type { TemplateMarker } from '../documents/pdf/template-placement.js';
import { invalid } from '../signing/signing.service.js';
import {
  CreateTemplateBody,
  SENDER_SLOT,
  TEMPLATE_FIELD_TYPES,
  VersionBody,
  type SlotIn,
  type SlotOut,
  type TemplateFieldIn,
  type TemplateFieldOut,
} from '../templates/templates.schemas.js';
import { stampKind } from '../templates/fields.js';
import { createTemplate, publishVersion, templateOf, versionOf } from '../templates/templates.service.js';
import type { DashboardDeps } from './dashboard.service.js';
import { actingAs, type Viewer } from './people.service.js';
import type { Form } from './render.js';

/** A field as the form's table holds it: what was typed, strings (a checkbox: 'on' or ''). */
export type FieldRow = {
  key: string;
  type: string;
  slot: string;
  required: string;
  label: string;
  pattern: string;
  max_length: string;
  options: string;
  anchor: string;
  page: string;
  x: string;
  y: string;
  w: string;
  h: string;
};
export type SlotRow = { name: string; order: string };
export type Definition = { slots: SlotIn[]; fields: TemplateFieldIn[] };
/** The form as typed, to show again with a problem. */
export type EditorForm = { name: string; upload: string; fileName: string; slots: SlotRow[]; fields: FieldRow[] };

const COLUMNS = ['key', 'type', 'slot', 'required', 'label', 'pattern', 'max_length', 'options', 'anchor'] as const;
const BOX = ['page', 'x', 'y', 'w', 'h'] as const;
export const FIELD_TYPES = TEMPLATE_FIELD_TYPES;
/** Blank rows offered after the filled ones, to add a slot or a field without JavaScript. */
const SPARE_FIELDS = 3;
const SPARE_SLOTS = 2;
const UPLOAD_KEY = /^upload-[a-p]{24}\/([0-9a-f]{32})$/;

/**
 * The blob kind of a workspace's uploads: `upload-` and 24 letters from the SHA-256 of its id (hex digits as a–p,
 * since a kind is letters). A key is only ever read as `uploadKind(viewer's workspace)/<hex>`, so another
 * workspace's upload is absent (404), without a table of uploads.
 */
export const uploadKind = (workspaceId: string): string =>
  `upload-${[...createHash('sha256').update(workspaceId).digest('hex').slice(0, 24)]
    .map((c) => String.fromCharCode(97 + parseInt(c, 16)))
    .join('')}`;

const blankField = (): FieldRow => ({
  key: '',
  type: 'text',
  slot: SENDER_SLOT,
  required: '',
  label: '',
  pattern: '',
  max_length: '',
  options: '',
  anchor: '',
  page: '',
  x: '',
  y: '',
  w: '',
  h: '',
});

/** The table with its spare rows. */
export const withSpares = (f: EditorForm): EditorForm => ({
  ...f,
  slots: [...f.slots.filter((s) => s.name), ...Array.from({ length: SPARE_SLOTS }, () => ({ name: '', order: '' }))],
  fields: [...f.fields.filter((r) => r.key), ...Array.from({ length: SPARE_FIELDS }, blankField)],
});

/**
 * The markers found in a new PDF as field rows: `{{signature:ROLE}}`-style markers give their type and slot; `{{x}}`
 * is a sender's text field named x, except `sig_ROLE` (a signature of ROLE) and names with "date" (a date).
 */
export function rowsFromMarkers(markers: readonly TemplateMarker[]): { slots: SlotRow[]; fields: FieldRow[] } {
  const fields: FieldRow[] = [];
  const keys = new Set<string>();
  for (const m of markers) {
    const inner = m.text.slice(2, -2);
    const typed = /^(signature|initials|date|text):([A-Za-z0-9_-]{1,64})$/.exec(inner);
    let key = typed ? `${typed[1]}_${typed[2]}` : inner.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 64) || 'field';
    const sig = /^sig(?:nature)?_([A-Za-z0-9_-]{1,60})$/.exec(key);
    for (let n = 2; keys.has(key); n++) key = `${key}_${n}`;
    keys.add(key);
    const [type, slot] = typed
      ? [typed[1]!, typed[2]!]
      : sig
        ? ['signature', sig[1]!]
        : [/date/i.test(key) ? 'date' : 'text', SENDER_SLOT];
    fields.push({ ...blankField(), key, type, slot, required: 'on', anchor: m.text });
  }
  const names = [...new Set(fields.map((f) => f.slot).filter((s) => s !== SENDER_SLOT))];
  return { slots: names.map((name) => ({ name, order: '1' })), fields };
}

/** A published version's slots and fields as rows (anchored fields keep the anchor; the box is shown too). */
export function rowsFromVersion(slots: readonly SlotOut[], fields: readonly TemplateFieldOut[]) {
  return {
    slots: slots.map((s) => ({ name: s.name, order: String(s.signing_order) })),
    fields: fields.map((f): FieldRow => ({
      key: f.key,
      type: f.type,
      slot: f.slot,
      required: f.required ? 'on' : '',
      label: f.label ?? '',
      pattern: f.pattern ?? '',
      max_length: f.max_length === undefined ? '' : String(f.max_length),
      options: (f.options ?? []).join(', '),
      anchor: f.anchor ?? '',
      page: String(f.page),
      x: String(f.box.x),
      y: String(f.box.y),
      w: String(f.box.width),
      h: String(f.box.height),
    })),
  };
}

/** The table as posted (`f.<i>.<column>`, `s.<i>.<column>`), every row kept, blank ones too. */
export function formOf(body: Form): EditorForm {
  const str = (k: string) => (typeof body[k] === 'string' ? body[k]!.trim() : '');
  const fields: FieldRow[] = [];
  for (let i = 0; i < MAX_FIELDS + SPARE_FIELDS && `f.${i}.key` in body; i++) {
    const row = blankField();
    for (const c of [...COLUMNS, ...BOX]) row[c] = str(`f.${i}.${c}`);
    fields.push(row);
  }
  const slots: SlotRow[] = [];
  for (let i = 0; i < MAX_SIGNERS + SPARE_SLOTS && `s.${i}.name` in body; i++)
    slots.push({ name: str(`s.${i}.name`), order: str(`s.${i}.order`) });
  return { name: str('name'), upload: str('upload'), fileName: str('file_name'), slots, fields };
}

const num = (at: string, s: string): number | undefined => {
  if (s === '') return undefined;
  if (!/^-?\d+(\.\d+)?$/.test(s)) throw invalid(at, `${at} must be a number.`);
  return Number(s);
};

/** The table's rows as a definition: blank rows dropped; a row with an anchor is placed by it, else by its box. */
export function definitionFromRows(f: Pick<EditorForm, 'slots' | 'fields'>): Definition {
  const slots = f.slots
    .filter((s) => s.name)
    .map((s, i) => ({
      name: s.name,
      ...(s.order ? { signing_order: num(`slots[${i}].signing_order`, s.order) } : {}),
    }));
  const fields = f.fields
    .filter((r) => r.key)
    .map((r, i): TemplateFieldIn => {
      const at = `fields[${i}] (${r.key})`;
      const options = r.options
        .split(/[,\n]/)
        .map((o) => o.trim())
        .filter(Boolean);
      const maxLength = num(`${at}.max_length`, r.max_length);
      const placed = r.anchor
        ? { anchor: r.anchor }
        : {
            ...(r.page ? { page: num(`${at}.page`, r.page) } : {}),
            ...(r.x || r.y || r.w || r.h
              ? {
                  box: {
                    x: num(`${at}.box.x`, r.x) ?? 0,
                    y: num(`${at}.box.y`, r.y) ?? 0,
                    width: num(`${at}.box.width`, r.w) ?? 0,
                    height: num(`${at}.box.height`, r.h) ?? 0,
                  },
                }
              : {}),
          };
      return {
        key: r.key,
        type: r.type as TemplateFieldIn['type'],
        slot: r.slot || SENDER_SLOT,
        required: r.required === 'on' || r.required === 'true',
        ...(r.label ? { label: r.label } : {}),
        ...(r.pattern ? { pattern: r.pattern } : {}),
        ...(maxLength !== undefined ? { max_length: maxLength } : {}),
        ...(options.length ? { options } : {}),
        ...placed,
      };
    });
  return { slots: slots as SlotIn[], fields };
}

/** The seam for a visual editor: `{slots, fields}` exactly as the API's template body takes them. */
export function definitionFromJson(json: string): Definition {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalid('definition', 'The definition is not JSON.');
  }
  const v = value as Partial<Definition> | null;
  return { slots: (v?.slots ?? []) as SlotIn[], fields: (v?.fields ?? []) as TemplateFieldIn[] };
}

/** The definition a posted form carries: the editor's JSON when there is one, else the table. */
export const definitionOf = (body: Form, form: EditorForm): Definition =>
  body.definition?.trim() ? definitionFromJson(body.definition) : definitionFromRows(form);

const createCheck = Schema.Compile(CreateTemplateBody);
const versionCheck = Schema.Compile(VersionBody);

/** The API's schema, as its routes apply it: the first problem as a 400 naming where it is. */
function checkSchema(check: typeof createCheck | typeof versionCheck, body: unknown): void {
  const [ok, errors] = check.Errors(body);
  if (ok) return;
  const first = errors.find((e) => !e.instancePath.startsWith('/file')) ?? errors[0]!;
  const where =
    first.instancePath
      .replace(/^\//, '')
      .replace(/\/(\d+)/g, '[$1]')
      .replace(/\//g, '.') || 'body';
  throw invalid(where, `${where} ${first.message}.`);
}

/** Keeps an uploaded PDF until the form is published (a day at least: then the orphan sweep may take it); returns its key for the form's hidden field. */
export const keepUpload = (deps: DashboardDeps, v: Viewer, bytes: Uint8Array) =>
  deps.blobs.put(bytes, uploadKind(v.workspace.id));

/** The random part of an upload key (what the editor's PDF route names), or null for anything else. */
export const uploadId = (key: string): string | null => UPLOAD_KEY.exec(key)?.[1] ?? null;

/** The workspace's upload `hex`; null when there is none (another workspace's, or gone). */
export async function uploadBytes(deps: DashboardDeps, v: Viewer, hex: string): Promise<Uint8Array | null> {
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  try {
    return await deps.blobs.get(`${uploadKind(v.workspace.id)}/${hex}`);
  } catch {
    return null;
  }
}

async function uploaded(deps: DashboardDeps, v: Viewer, key: string): Promise<Uint8Array> {
  const hex = uploadId(key);
  if (!hex) throw invalid('file', 'The uploaded PDF is missing; upload it again.');
  const bytes = await uploadBytes(deps, v, hex);
  if (!bytes) throw invalid('file', 'The uploaded PDF is no longer here; upload it again.');
  return bytes;
}

/** The original PDF of version `n` of a template of the workspace (the one its boxes are measured on). */
export async function versionPdf(deps: DashboardDeps, v: Viewer, id: string, n: number): Promise<Uint8Array> {
  const tpl = await templateOf(deps, actingAs(v), id, { archived: true });
  return deps.blobs.get((await versionOf(deps, tpl, n)).original_blob);
}

/**
 * What the visual editor needs besides the rows: the page sizes, where each `{{…}}` marker is (an anchored field is
 * drawn where placement will put it), and the least box of each type when anchored (placement's rule).
 */
export async function editorFacts(deps: DashboardDeps, bytes: Uint8Array, scanned?: { markers: TemplateMarker[] }) {
  const [info, scan] = await Promise.all([deps.pdf.inspect(bytes), scanned ?? deps.pdf.templateMarkers(bytes)]);
  return {
    pages: info.pages.map((p) => ({ width: p.width, height: p.height })),
    markers: Object.fromEntries(scan.markers.map((m) => [m.text, { page: m.page, ...m.box }])),
    markerCount: scan.markers.length,
    anchorMin: Object.fromEntries(FIELD_TYPES.map((t) => [t, ANCHOR_FIELD_MIN[stampKind(t)]])),
  };
}

const fileIn = (bytes: Uint8Array, name: string) => ({
  name: (name || 'template.pdf').slice(0, 255),
  content_base64: Buffer.from(bytes).toString('base64'),
});

/** Publishes version 1 of a new template (createTemplate, as the person). */
export async function createFromForm(deps: DashboardDeps, v: Viewer, body: Form, form: EditorForm) {
  const def = definitionOf(body, form);
  const file = fileIn(await uploaded(deps, v, form.upload), form.fileName);
  const input = { name: form.name, file, ...def };
  checkSchema(createCheck, input);
  return createTemplate(deps, actingAs(v), input as CreateTemplateBody);
}

/**
 * Publishes the next version; `replacement` is a new PDF (else the current one is kept). `pagesChanged`: the new
 * PDF's page count or a page's size differs from the previous version's, so boxes may have moved off their place.
 */
export async function publishFromForm(
  deps: DashboardDeps,
  v: Viewer,
  id: string,
  body: Form,
  form: EditorForm,
  replacement: { bytes: Uint8Array; name: string } | null,
) {
  const auth = actingAs(v);
  const def = definitionOf(body, form);
  const input = { ...def, ...(replacement ? { file: fileIn(replacement.bytes, replacement.name) } : {}) };
  checkSchema(versionCheck, input);
  let pagesChanged = false;
  if (replacement) {
    const previous = await versionOf(deps, await templateOf(deps, auth, id, { archived: false }));
    const [before, after] = await Promise.all([
      deps.pdf.inspect(await deps.blobs.get(previous.original_blob)),
      deps.pdf.inspect(replacement.bytes),
    ]);
    pagesChanged =
      before.pageCount !== after.pageCount ||
      before.pages.some((p, i) => {
        const q = after.pages[i]!;
        return Math.abs(p.width - q.width) > 0.5 || Math.abs(p.height - q.height) > 0.5;
      });
  }
  const out = await publishVersion(deps, auth, id, input as VersionBody);
  return { template: out, pagesChanged };
}

/** An API refusal as lines for the form: its problems when it lists them, else its message (English). */
export function problemLines(err: ApiError): string[] {
  const problems = (err.meta as { problems?: { message?: string }[] } | undefined)?.problems;
  const lines = problems?.map((p) => p.message).filter((m): m is string => typeof m === 'string') ?? [];
  return lines.length ? lines : [err.message];
}

/** The refusals a form shows (an ApiError below 500 but 404); anything else is thrown on (404: the error page). */
export function refusal(err: unknown): string[] {
  if (err instanceof ApiError && err.status < 500 && err.status !== 404) return problemLines(err);
  throw err;
}

export const noFile = () => apiError('invalid_file', { message: 'Choose a PDF file.' });
