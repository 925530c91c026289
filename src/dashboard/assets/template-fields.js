// The template create and publish pages' visual editor: field-editor.js over the PDF, with the rows of fields as the
// one truth. Moving or resizing a box writes its row's page and box; a field added in the editor takes an empty row
// (or a new one); removing a box empties its row's key and hides it (a row without a key is dropped when posted, and
// the rows keep their numbering, which the server reads in order). Typing in a row or a slot redraws the boxes. A row
// with a marker is drawn where placement will put it (anchorBox in placement.work.ts) and is locked: moving it by
// hand would leave the marker's text printed. Types and rules stay in the rows. Without this script the rows are the
// whole editor, and the form posts the same either way.
const $ = (id) => document.getElementById(id);
const data = JSON.parse($('tpl-editor-data').textContent);
const S = data.strings;
const form = $('template-editor');
const round = (v) => Math.round(v * 100) / 100;
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
const rows = () => [...form.querySelectorAll('fieldset.field-row')];
const cell = (i, col) => form.elements.namedItem(`f.${i}.${col}`);
const valueOf = (i, col) => cell(i, col)?.value.trim() ?? '';

/** The parties the editor colours: `sender`, then each named slot in its row's order. */
function slotNames() {
  const names = [data.sender];
  for (let i = 0; form.elements.namedItem(`s.${i}.name`); i++) {
    const v = form.elements.namedItem(`s.${i}.name`).value.trim();
    if (v && !names.includes(v)) names.push(v);
  }
  return names;
}

/** Where placement puts an anchored field: the marker's box grown to the type's least size from its bottom-left. */
function anchorBox(m, type) {
  const p = data.pages[m.page - 1];
  const min = data.anchorMin[type] ?? { width: 150, height: 20 };
  const width = Math.min(Math.max(m.width, min.width), p.width);
  const height = Math.min(Math.max(m.height, min.height), p.height);
  const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), Math.max(lo, hi));
  return {
    page: m.page,
    x: round(clamp(m.x, 0, p.width - width)),
    y: round(clamp(m.y + m.height - height, 0, p.height - height)),
    width: round(width),
    height: round(height),
  };
}

const num = (s) => (s !== '' && Number.isFinite(Number(s)) ? Number(s) : null);
function boxOf(i) {
  const [page, x, y, width, height] = ['page', 'x', 'y', 'w', 'h'].map((c) => num(valueOf(i, c)));
  return page && x !== null && y !== null && width && height ? { page, x, y, width, height } : null;
}

/** The rows with a key and a place, as the editor's fields (a row without a place yet is not drawn). */
function fieldsFromRows(parties) {
  const out = [];
  rows().forEach((_, i) => {
    const key = valueOf(i, 'key');
    if (!key) return;
    const type = valueOf(i, 'type');
    const at = parties.indexOf(valueOf(i, 'slot') || data.sender);
    // A slot no slot row names: past the parties, so the editor flags it.
    const base = { row: i, n: i + 1, key, type, signer: at >= 0 ? at : parties.length, required: true };
    const anchor = valueOf(i, 'anchor');
    const marker = anchor ? data.markers[anchor.replace(/\s+/g, '')] : undefined;
    const box = marker ? anchorBox(marker, type) : boxOf(i);
    if (box) out.push({ ...base, ...box, ...(anchor ? { locked: true, anchor } : {}) });
  });
  return out;
}

function set(i, col, value) {
  const el = cell(i, col);
  if (!el) return;
  if (el.type === 'checkbox') el.checked = Boolean(value);
  else el.value = String(value);
}
function legend(i, key) {
  const l = rows()[i].querySelector('legend');
  const code = document.createElement('code');
  code.textContent = key;
  l.replaceChildren(fill(S.fieldN, { n: i + 1 }), ...(key ? [': ', code] : []));
}

/** A new row after the last, numbered next (a copy of the last one, emptied). */
function newRow() {
  const all = rows();
  const last = all[all.length - 1];
  const from = all.length - 1;
  const to = all.length;
  const copy = last.cloneNode(true);
  for (const el of copy.querySelectorAll('[id], [name], [for]'))
    for (const a of ['id', 'name', 'for']) {
      const v = el.getAttribute(a);
      if (v) el.setAttribute(a, v.replace(`f-${from}-`, `f-${to}-`).replace(`f.${from}.`, `f.${to}.`));
    }
  copy.dataset.row = String(to);
  last.after(copy);
  emptyRow(to);
  return to;
}
function emptyRow(i) {
  for (const col of ['key', 'label', 'pattern', 'max_length', 'options', 'anchor', 'page', 'x', 'y', 'w', 'h'])
    set(i, col, '');
  set(i, 'type', 'text');
  set(i, 'slot', data.sender);
  set(i, 'required', false);
  legend(i, '');
}

function uniqueKey(base) {
  const taken = new Set(rows().map((_, i) => valueOf(i, 'key')));
  const clean = base.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 60);
  let key = clean;
  for (let n = 2; taken.has(key); n++) key = `${clean}_${n}`;
  return key;
}

let editor = null;
let drawn = [];

/** A field added in the editor: it takes the first row without a key (shown again), or a new row. */
function prepare(f) {
  const parties = slotNames();
  let i = rows().findIndex((_, j) => !valueOf(j, 'key'));
  if (i < 0) i = newRow();
  const slot = parties[f.signer] ?? data.sender;
  const key = uniqueKey(`${f.type}_${slot}`);
  emptyRow(i);
  set(i, 'key', key);
  set(i, 'type', f.type);
  set(i, 'slot', slot);
  set(i, 'required', true);
  legend(i, key);
  rows()[i].hidden = false;
  return { ...f, row: i, n: i + 1, key };
}

/** The editor changed its fields: each one's row gets its slot and (unless a marker places it) its box. */
function onChange(list) {
  const parties = slotNames();
  const kept = new Set(list.map((f) => f.row));
  for (const f of list) {
    if (f.signer < parties.length) set(f.row, 'slot', parties[f.signer]);
    if (f.locked) continue;
    set(f.row, 'page', f.page);
    set(f.row, 'x', round(f.x));
    set(f.row, 'y', round(f.y));
    set(f.row, 'w', round(f.width));
    set(f.row, 'h', round(f.height));
  }
  for (const f of drawn)
    if (!kept.has(f.row)) {
      emptyRow(f.row);
      rows()[f.row].hidden = true;
    }
  drawn = list;
  shown = JSON.stringify([parties, fieldsFromRows(parties)]);
}

let shown = '';
function redraw() {
  const parties = slotNames();
  const fields = fieldsFromRows(parties);
  // A change event after typing (on blur) usually changes nothing the editor shows.
  const now = JSON.stringify([parties, fields]);
  if (now === shown) return;
  shown = now;
  drawn = fields;
  editor.setParties(parties);
  editor.setFields(drawn);
}

async function start() {
  const root = $('editor');
  root.hidden = false;
  const parties = slotNames();
  drawn = fieldsFromRows(parties);
  const { createFieldEditor } = await import(data.editor);
  editor = await createFieldEditor(
    {
      viewer: $('fe-viewer'),
      palette: $('fe-palette'),
      party: $('fe-party'),
      add: $('fe-add'),
      selected: $('fe-selected'),
      problems: $('fe-problems'),
      message: $('fe-message'),
      status: $('fe-status'),
    },
    {
      pdf: data.pdf,
      pdfjs: data.pdfjs,
      view: data.pdfjs.view,
      pages: data.pages,
      fields: drawn,
      parties,
      types: Object.keys(S.types),
      strings: S,
      onChange,
      prepare,
    },
  );
  // New fields go to the first signer slot by default (sender fields mostly come from markers).
  if (parties.length > 1) $('fe-party').value = '1';
  shown = JSON.stringify([parties, drawn]);
  const typed = (e) => {
    if (e.target.closest('#editor')) return;
    if (!e.target.closest('fieldset.field-row') && !/^s\.\d+\./.test(e.target.name ?? '')) return;
    // A change event comes as focus leaves the input, maybe for a box: redraw once the focus has landed there.
    if (e.type === 'change') setTimeout(redraw, 0);
    else redraw();
  };
  form.addEventListener('input', typed);
  form.addEventListener('change', typed);
  document.body.dataset.editor = 'ready';
}

start().catch(() => {
  // The rows work without the editor.
  $('editor').hidden = true;
});
