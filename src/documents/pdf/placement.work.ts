// Worker side of placement.ts (whose header states the guarantees): the checks of a placement request, then the
// changes to the PDF with pdf-lib; also the box rules and helpers template-placement.work.ts shares. Runs only in
// a PDF worker thread: imported by pdf.worker.ts and other *.work.ts (and tests), never by a main-thread module.
import { DEFAULT_LOCALE, fill, strings, type Locale } from '../../i18n/i18n.js';
import { MAX_FIELDS } from '../../limits.js';
import { apiError, ApiError } from '../../lib/errors.js';
import {
  concatTransformationMatrix,
  PDFDocument,
  type PDFPage,
  popGraphicsState,
  pushGraphicsState,
  rgb,
} from './pdf-lib.js';
import { anchorProblems, problemError } from './anchors.js';
import { markerPattern, scanAnchorsInWorker } from './anchors.work.js';
import { Fonts } from './fonts.js';
import { type PageGeometry, pageGeometry, round2, shownToUser, toShown } from './geometry.js';
import { removeMarkers } from './marker-removal.js';
import {
  ANCHOR_FIELD_MIN,
  type CoordinateField,
  MIN_FIELD_SIZE,
  placementFailed,
  type PlacementInput,
  type PreparedPdf,
  type Signer,
} from './placement.js';
import { type Anchor, type Box, type Field, FIELD_TYPES, type FieldType } from './types.js';

/** Worker side of preparePdf. */
export async function prepareInWorker(bytes: Uint8Array, input: PlacementInput): Promise<PreparedPdf> {
  const mode = input?.mode;
  if (mode !== 'anchors' && mode !== 'auto_append' && mode !== 'coordinates') {
    throw apiError('invalid_request', {
      message: 'placement must be anchors, auto_append or coordinates.',
      meta: { field: 'placement' },
    });
  }
  // Checks that need no PDF come first, so a bad request never costs a parse.
  if (input.mode === 'anchors') checkRoles(input.roles);
  if (input.mode === 'auto_append') checkSigners(input.signers);
  if (input.mode === 'coordinates') checkCoordinateFieldsShape(input.fields, input.roles);

  let anchors: Anchor[] = [];
  if (input.mode === 'anchors') {
    const scan = await scanAnchorsInWorker(bytes);
    const [first] = anchorProblems(scan.anchors, input.roles, { hasText: scan.hasText });
    if (first) throw problemError(first);
    anchors = scan.anchors;
  }

  try {
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    const pages = doc.getPages();
    const geoms = pages.map(pageGeometry);
    let fields: Omit<Field, 'id'>[];
    if (input.mode === 'anchors') {
      fields = anchors.map((a) => anchorField(a, geoms[a.page - 1]));
      await clearMarkers(
        doc,
        geoms,
        anchors.map((a) => ({ ...a, re: markerPattern(a) })),
      );
    } else if (input.mode === 'coordinates') {
      fields = checkCoordinateFieldsOnPages(input.fields, geoms);
    } else {
      fields = await appendSignaturePages(doc, geoms[geoms.length - 1], input.signers, input.locale ?? DEFAULT_LOCALE);
    }
    const pdf = await doc.save({ useObjectStreams: false });
    return { pdf, fields: fields.map((f, i) => ({ id: `f${i + 1}`, ...f })), pageCount: doc.getPageCount() };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw placementFailed(err instanceof Error ? err.message : 'unknown error');
  }
}

// ---- anchors ----

export function anchorField(a: Anchor, g: PageGeometry): Omit<Field, 'id'> {
  return { role: a.role, type: a.type, page: a.page, ...anchorBox(a.box, a.type, g) };
}

/** A field's box from its marker's box: grown to ANCHOR_FIELD_MIN[type], kept on the page, rounded. */
export function anchorBox(marker: Box, type: FieldType, g: PageGeometry): Box {
  const min = ANCHOR_FIELD_MIN[type];
  const width = Math.min(Math.max(marker.width, min.width), g.width);
  const height = Math.min(Math.max(marker.height, min.height), g.height);
  // The box grows up and to the right from the marker's bottom-left: markers sit on the signature line.
  const x = clamp(marker.x, 0, g.width - width);
  const y = clamp(marker.y + marker.height - height, 0, g.height - height);
  return { x: round2(x), y: round2(y), width: round2(width), height: round2(height) };
}

const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), Math.max(lo, hi));

/** Runs `draw` with the page's coordinates switched to "shown" space (bottom-left of the page as displayed). */
export async function inShownSpace(page: PDFPage, g: PageGeometry, draw: () => void | Promise<void>): Promise<void> {
  page.pushOperators(pushGraphicsState(), concatTransformationMatrix(...shownToUser(g)));
  await draw();
  page.pushOperators(popGraphicsState());
}

/**
 * Takes each marker (page, box as pdf.js found it, and a regex of its text) off its page: deleted from the content
 * where marker-removal.ts can, masked (maskAnchors) where it cannot.
 */
export async function clearMarkers(
  doc: PDFDocument,
  geoms: PageGeometry[],
  markers: readonly (Pick<Anchor, 'page' | 'box'> & { re: RegExp })[],
): Promise<void> {
  const pages = doc.getPages();
  await maskAnchors(pages, geoms, removeMarkers(doc, pages, markers));
}

const MASK_PAD = 1;

/** Covers each marker (its page and box) with an opaque white rectangle, MASK_PAD wider on every side. */
export async function maskAnchors(
  pages: PDFPage[],
  geoms: PageGeometry[],
  anchors: readonly Pick<Anchor, 'page' | 'box'>[],
): Promise<void> {
  for (let i = 0; i < pages.length; i++) {
    const mine = anchors.filter((a) => a.page === i + 1);
    if (mine.length === 0) continue;
    await inShownSpace(pages[i], geoms[i], () => {
      for (const a of mine) {
        const r = toShown(geoms[i], a.box);
        pages[i].drawRectangle({
          x: r.x - MASK_PAD,
          y: r.y - MASK_PAD,
          width: r.width + 2 * MASK_PAD,
          height: r.height + 2 * MASK_PAD,
          color: rgb(1, 1, 1),
          borderWidth: 0,
        });
      }
    });
  }
}

// ---- coordinates ----

const bad = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  apiError('invalid_request', { message, meta: { field, ...extra } });

/** How a box's problems are named: messages start with `at` (then `.x` etc.); meta.field is `field(part)`. */
export type BoxPath = { at: string; field: (part: keyof Box) => string };

/** Names each part on its own: meta.field `${at}.x` (coordinates mode). */
const partsOf = (at: string): BoxPath => ({ at, field: (k) => `${at}.${k}` });

/** A page number as given: an integer from 1 (`${at}.page`). */
export function checkPageNumber(page: unknown, at: string): asserts page is number {
  if (!Number.isInteger(page) || (page as number) < 1) throw bad(`${at}.page`, `${at}.page must be an integer from 1.`);
}

/** A box's own shape: finite numbers, x and y not negative, at least MIN_FIELD_SIZE each way. */
export function checkBoxShape(b: Partial<Record<keyof Box, unknown>>, p: BoxPath): asserts b is Box {
  for (const k of ['x', 'y', 'width', 'height'] as const) {
    if (typeof b[k] !== 'number' || !Number.isFinite(b[k]))
      throw bad(p.field(k), `${p.at}.${k} must be a finite number of points.`);
  }
  for (const k of ['x', 'y'] as const)
    if ((b[k] as number) < 0) throw bad(p.field(k), `${p.at}.${k} must not be negative.`);
  for (const k of ['width', 'height'] as const) {
    if ((b[k] as number) < MIN_FIELD_SIZE)
      throw bad(p.field(k), `${p.at}.${k} must be at least ${MIN_FIELD_SIZE} points.`);
  }
}

function checkCoordinateFieldsShape(fields: unknown, roles: unknown): asserts fields is CoordinateField[] {
  if (!Array.isArray(fields) || fields.length === 0)
    throw bad('placement.fields', 'placement.fields must list at least one field.');
  if (fields.length > MAX_FIELDS)
    throw bad('placement.fields', `placement.fields may list at most ${MAX_FIELDS} fields.`);
  checkRoles(roles);
  fields.forEach((f: Partial<Record<keyof CoordinateField, unknown>>, i) => {
    const at = `placement.fields[${i}]`;
    if (typeof f !== 'object' || f === null) throw bad(at, `${at} must be an object.`);
    if (typeof f.role !== 'string' || f.role === '') throw bad(`${at}.role`, `${at}.role must be a non-empty string.`);
    if (!FIELD_TYPES.includes(f.type as FieldType))
      throw bad(`${at}.type`, `${at}.type must be one of ${FIELD_TYPES.join(', ')}.`);
    for (const k of ['label', 'required'] as const) {
      if (f[k] !== undefined && f.type !== 'text' && f.type !== 'checkbox')
        throw bad(`${at}.${k}`, `${at}.${k} is only allowed on text and checkbox fields.`);
    }
    checkPageNumber(f.page, at);
    checkBoxShape(f, partsOf(at));
  });
  const known = new Set(roles as string[]);
  fields.forEach((f: CoordinateField) => {
    if (!known.has(f.role))
      throw apiError('unknown_role', {
        message: `A field names role "${f.role}", which no signer has.`,
        meta: { role: f.role },
      });
  });
  for (const role of new Set(roles as string[])) {
    if (!fields.some((f: CoordinateField) => f.role === role && f.type === 'signature')) {
      throw apiError('signer_has_no_anchor', {
        message: `No signature field for signer role "${role}".`,
        meta: { role },
      });
    }
  }
}

const EPS = 0.01;

function checkCoordinateFieldsOnPages(fields: CoordinateField[], geoms: PageGeometry[]): Omit<Field, 'id'>[] {
  return fields.map((f, i) => {
    const at = `placement.fields[${i}]`;
    checkBoxOnPage(f, pageGeometryOf(geoms, f.page, at), partsOf(at));
    const rules = coordinateRules(f);
    const box = { x: f.x, y: f.y, width: f.width, height: f.height };
    return { role: f.role, type: f.type, page: f.page, ...box, ...(rules ? { rules } : {}) };
  });
}

/** A coordinates field's label and `required`, when given (documents/fields.ts reads them). */
function coordinateRules(f: CoordinateField): Field['rules'] {
  if (f.label === undefined && f.required === undefined) return undefined;
  return { ...(f.label !== undefined ? { label: f.label } : {}), required: f.required ?? f.type === 'text' };
}

/** The page's geometry, or invalid_request on `${at}.page` (meta.page_count) when the PDF has no such page. */
export function pageGeometryOf(geoms: readonly PageGeometry[], page: number, at: string): PageGeometry {
  const g = geoms[page - 1];
  if (!g)
    throw bad(`${at}.page`, `${at}.page is ${page}; the PDF has ${geoms.length} pages.`, { page_count: geoms.length });
  return g;
}

/** A box (shape already checked) must lie on the shown page; refusals carry meta.page_width and page_height. */
export function checkBoxOnPage(b: Box, g: PageGeometry, p: BoxPath): void {
  const size = { page_width: round2(g.width), page_height: round2(g.height) };
  if (b.x >= g.width) throw bad(p.field('x'), `${p.at}.x is outside the page (${size.page_width} points wide).`, size);
  if (b.y >= g.height)
    throw bad(p.field('y'), `${p.at}.y is outside the page (${size.page_height} points high).`, size);
  if (b.x + b.width > g.width + EPS) throw bad(p.field('width'), `${p.at} runs past the right edge of the page.`, size);
  if (b.y + b.height > g.height + EPS) throw bad(p.field('height'), `${p.at} runs past the bottom of the page.`, size);
}

// ---- auto_append ----

function checkRoles(roles: unknown): asserts roles is string[] {
  if (!Array.isArray(roles) || roles.some((r) => typeof r !== 'string' || r === '')) {
    throw bad('signers', 'Every signer needs a non-empty role.');
  }
}

function checkSigners(signers: unknown): asserts signers is Signer[] {
  if (!Array.isArray(signers) || signers.length === 0) throw bad('signers', 'At least one signer is needed.');
  signers.forEach((s: Partial<Record<keyof Signer, unknown>>, i) => {
    for (const k of ['role', 'name', 'email'] as const) {
      if (typeof s?.[k] !== 'string' || (k !== 'name' && s[k] === ''))
        throw bad(`signers[${i}].${k}`, `signers[${i}].${k} must be a string.`);
    }
  });
}

const MARGIN = 54;
const BLOCK = { label: 16, gap: 8, sig: { width: 240, height: 56 }, date: { width: 140, height: 22 }, after: 34 };
const GREY = rgb(0.55, 0.55, 0.6);

/** Appends signature pages (the last page's shown size, or Letter if that is too small); one block per signer. */
async function appendSignaturePages(
  doc: PDFDocument,
  last: PageGeometry,
  signers: Signer[],
  locale: Locale,
): Promise<Omit<Field, 'id'>[]> {
  const words = strings(locale, 'audit');
  const [w, h] = last.width >= 300 && last.height >= 300 ? [last.width, last.height] : [612, 792];
  const fonts = new Fonts(doc);
  const fields: Omit<Field, 'id'>[] = [];
  const sigW = Math.min(BLOCK.sig.width, w - 2 * MARGIN);
  const dateBeside = MARGIN + sigW + 24 + BLOCK.date.width <= w - MARGIN;
  const blockH = BLOCK.label + BLOCK.gap + BLOCK.sig.height + (dateBeside ? 0 : 14 + BLOCK.date.height) + BLOCK.after;

  let page: PDFPage | null = null;
  let top = 0;
  const newPage = async (first: boolean) => {
    page = doc.addPage([w, h]);
    top = MARGIN;
    const title = first ? words.signaturesTitle : words.signaturesContinued;
    await fonts.draw(page, title, { x: MARGIN, y: h - top - 16, size: 16, style: 'bold' });
    top += 40;
  };
  await newPage(true);

  for (const s of signers) {
    if (top + blockH > h - MARGIN) await newPage(false);
    const p = page as unknown as PDFPage;
    const pageNo = doc.getPageCount();
    const label = await fonts.truncate(
      fill(words.signatureOf, { name: s.name, role: s.role }),
      'regular',
      11,
      w - 2 * MARGIN,
    );
    await fonts.draw(p, label, { x: MARGIN, y: h - top - 11, size: 11 });
    const sig: Box = { x: MARGIN, y: top + BLOCK.label + BLOCK.gap, width: sigW, height: BLOCK.sig.height };
    const date: Box = dateBeside
      ? {
          x: MARGIN + sigW + 24,
          y: sig.y + sig.height - BLOCK.date.height,
          width: BLOCK.date.width,
          height: BLOCK.date.height,
        }
      : { x: MARGIN, y: sig.y + sig.height + 14, width: BLOCK.date.width, height: BLOCK.date.height };
    for (const b of [sig, date]) {
      p.drawRectangle({
        x: b.x,
        y: h - b.y - b.height,
        width: b.width,
        height: b.height,
        borderColor: GREY,
        borderWidth: 0.75,
      });
    }
    await fonts.draw(p, words.signatureDate, { x: date.x, y: h - date.y + 3, size: 8, color: GREY });
    fields.push({ role: s.role, type: 'signature', page: pageNo, ...sig });
    fields.push({ role: s.role, type: 'date', page: pageNo, ...date });
    top += blockH;
  }
  return fields;
}
