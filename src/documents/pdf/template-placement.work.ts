// Worker side of template-placement.ts (whose header states the guarantees): the checks of the fields, the anchor
// search over pdf.js lines, then the boxes and the markers' removal with pdf-lib. Runs only in a PDF worker thread: imported by
// pdf.worker.ts (and tests), never by a main-thread module.
import { MAX_ANCHOR_LENGTH, MAX_FIELDS } from '../../limits.js';
import { apiError, ApiError } from '../../lib/errors.js';
import { readTextLinesInWorker } from './anchors.work.js';
import { pageGeometry, round2 } from './geometry.js';
import { PDFDocument } from './pdf-lib.js';
import { placementFailed } from './placement.js';
import {
  anchorBox,
  type BoxPath,
  checkBoxOnPage,
  checkBoxShape,
  checkPageNumber,
  clearMarkers,
  pageGeometryOf,
} from './placement.work.js';
import type { PlacedField, PlacedTemplate, TemplateMarker, TemplatePlacementField } from './template-placement.js';
import { type Box, FIELD_TYPES, type FieldType } from './types.js';

/**
 * How an anchor is searched for: the regex, and the anchor without whitespace, which a line without whitespace
 * contains wherever the regex matches (a cheap pre-filter: most lines are skipped without running a regex).
 */
type AnchorSearch = { re: RegExp; compact: string };
type Hit = { page: number; box: Box };

/** Worker side of placeTemplate. */
export async function placeTemplateInWorker(
  bytes: Uint8Array,
  fields: TemplatePlacementField[],
): Promise<PlacedTemplate> {
  const searches = checkFields(fields);
  const hits = new Map<number, Hit[]>();
  let hasText = true;
  if (searches.size > 0) {
    for (const i of searches.keys()) hits.set(i, []);
    const all = [...searches];
    ({ hasText } = await readTextLinesInWorker(bytes, (text, page, locate) => {
      const compact = text.replace(WHITESPACES, '');
      for (const [i, s] of all) {
        if (!compact.includes(s.compact)) continue;
        for (const m of text.matchAll(s.re)) {
          const box = locate(m.index!, m.index! + m[0].length);
          if (box) hits.get(i)!.push({ page, box });
        }
      }
    }));
  }

  try {
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    const pages = doc.getPages();
    const geoms = pages.map(pageGeometry);
    const markers: (Hit & { re: RegExp })[] = [];
    const placed = fields.map((f, i): PlacedField => {
      if (f.anchor !== undefined) {
        const hit = onlyHit(f, hits.get(i)!, hasText);
        markers.push({ ...hit, re: searches.get(i)!.re });
        return { key: f.key, page: hit.page, ...anchorBox(hit.box, f.type, geoms[hit.page - 1]) };
      }
      const at = `fields[${i}]`;
      const box = f.box!;
      checkBoxOnPage(box, pageGeometryOf(geoms, f.page!, at), boxPath(i));
      return { key: f.key, page: f.page!, ...roundBox(box) };
    });
    await clearMarkers(doc, geoms, markers);
    const pdf = await doc.save({ useObjectStreams: false });
    return { pdf, pageCount: pages.length, fields: placed };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw placementFailed(err instanceof Error ? err.message : 'unknown error');
  }
}

const TEMPLATE_MARKER = /\{\{[^{}\n]{1,96}\}\}/gu;

/** Worker side of findTemplateMarkers: the same lines the anchors are searched in, matched against `{{…}}`. */
export async function findTemplateMarkersInWorker(bytes: Uint8Array) {
  const byText = new Map<string, TemplateMarker>();
  const { hasText, pageCount } = await readTextLinesInWorker(bytes, (text, page, locate) => {
    for (const m of text.matchAll(TEMPLATE_MARKER)) {
      const key = m[0].replace(WHITESPACES, '');
      const seen = byText.get(key);
      if (seen) seen.count++;
      else {
        const box = locate(m.index!, m.index! + m[0].length);
        if (box) byText.set(key, { text: key, page, box: roundBox(box), count: 1 });
      }
    }
  });
  return { markers: [...byText.values()], hasText, pageCount };
}

/** The one occurrence of a field's anchor, or no_anchors_found / duplicate_anchor. */
function onlyHit(f: TemplatePlacementField, hits: Hit[], hasText: boolean): Hit {
  const anchor = f.anchor!;
  if (hits.length === 0) {
    const message = hasText
      ? `The anchor "${anchor}" of field "${f.key}" is not in the PDF's text.`
      : `The PDF has no extractable text (a scan?), so the anchor "${anchor}" of field "${f.key}" cannot be found.`;
    throw apiError('no_anchors_found', {
      message,
      meta: { field: f.key, anchor, reason: hasText ? 'no_markers' : 'no_text' },
    });
  }
  if (hits.length > 1) {
    const pages = [...new Set(hits.map((h) => h.page))].sort((a, b) => a - b);
    throw apiError('duplicate_anchor', {
      message: `The anchor "${anchor}" of field "${f.key}" appears ${hits.length} times (pages ${pages.join(', ')}); it must appear once.`,
      meta: { field: f.key, anchor, pages },
    });
  }
  return hits[0];
}

const bad = (field: string, message: string) => apiError('invalid_request', { message, meta: { field } });

/** A template box is named as a whole: messages say `fields[i].box.x …`, meta.field is `fields[i].box`. */
const boxPath = (i: number): BoxPath => ({ at: `fields[${i}].box`, field: () => `fields[${i}].box` });

const roundBox = (b: Box): Box => ({
  x: round2(b.x),
  y: round2(b.y),
  width: round2(b.width),
  height: round2(b.height),
});

const WHITESPACE = /\s/u;
const WHITESPACES = /\s+/gu;
const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/gu;

/** The anchor as a regex: its characters literally, whitespace dropped, any whitespace allowed between them. */
export function anchorPattern(anchor: string): AnchorSearch {
  const chars = [...anchor].filter((c) => !WHITESPACE.test(c));
  const re = new RegExp(chars.map((c) => c.replace(REGEX_SPECIAL, '\\$&')).join('\\s*'), 'gu');
  return { re, compact: chars.join('') };
}

/**
 * Checks that need no PDF, for every field in order; returns the search of each anchored field by index.
 * Two fields whose anchors are the same text (whitespace aside) are duplicate_anchor on the second one.
 */
function checkFields(fields: unknown): Map<number, AnchorSearch> {
  if (!Array.isArray(fields) || fields.length === 0) throw bad('fields', 'fields must list at least one field.');
  if (fields.length > MAX_FIELDS) throw bad('fields', `fields may list at most ${MAX_FIELDS} fields.`);
  const searches = new Map<number, AnchorSearch>();
  const byPattern = new Map<string, string>();
  fields.forEach((f: Partial<Record<keyof TemplatePlacementField, unknown>>, i) => {
    const at = `fields[${i}]`;
    if (typeof f !== 'object' || f === null) throw bad(at, `${at} must be an object.`);
    if (typeof f.key !== 'string' || f.key === '') throw bad(`${at}.key`, `${at}.key must be a non-empty string.`);
    if (!FIELD_TYPES.includes(f.type as FieldType))
      throw bad(`${at}.type`, `${at}.type must be one of ${FIELD_TYPES.join(', ')}.`);
    const placed = f.page !== undefined || f.box !== undefined;
    if (f.anchor !== undefined && placed)
      throw bad(at, `${at} has an anchor and a page or box; give one or the other.`);
    if (f.anchor === undefined && !placed) throw bad(at, `${at} needs an anchor, or a page and a box.`);
    if (f.anchor !== undefined) {
      const anchor = f.anchor;
      if (typeof anchor !== 'string' || !/\S/u.test(anchor) || [...anchor].length > MAX_ANCHOR_LENGTH)
        throw bad(
          `${at}.anchor`,
          `${at}.anchor must be a text of 1 to ${MAX_ANCHOR_LENGTH} characters, not only spaces.`,
        );
      const search = anchorPattern(anchor);
      const other = byPattern.get(search.compact);
      if (other !== undefined) {
        throw apiError('duplicate_anchor', {
          message: `Fields "${other}" and "${f.key}" both use the anchor "${anchor}"; each field needs its own.`,
          meta: { field: f.key, anchor, other_field: other },
        });
      }
      byPattern.set(search.compact, f.key);
      searches.set(i, search);
    } else {
      checkPageNumber(f.page, at);
      if (typeof f.box !== 'object' || f.box === null)
        throw bad(`${at}.box`, `${at}.box must be an object with x, y, width and height.`);
      checkBoxShape(f.box, boxPath(i));
    }
  });
  return searches;
}
