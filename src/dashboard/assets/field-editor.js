// The field editor: a PDF's pages (drawn by pdf-view.js, lazily: page 1 at once, the others as they near the
// viewport) with boxes over them that a person drops, moves and resizes with the mouse, touch (pointer events) or
// the keyboard alone. Boxes are kept in PDF points from the top-left corner of the page as shown (the API's system)
// and drawn in percentages of the page, so they stay where they are at any zoom. Parameterised by the parties (the
// send page's signers; a template's slots and `sender`) and the field types offered; the page gives all words. A
// field may carry more than the editor uses (a template row's index, its key, its number `n` as the page shows it,
// `locked` when a marker places it: shown, not moved); those travel with it. Plain ES module, no build step, no
// inline script (CSP script-src 'self').

const MIN = 5; // the API's smallest box side, in points
const EPS = 0.01;
/** Default box per type, in points (the API's anchor minimums). */
export const DEFAULT_SIZE = {
  signature: { width: 150, height: 40 },
  initials: { width: 60, height: 30 },
  date: { width: 100, height: 20 },
  text: { width: 150, height: 20 },
  checkbox: { width: 20, height: 20 },
};
const round = (v) => Math.round(v * 100) / 100;
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));

/** What blocks sending, as send.form.ts's fieldProblems says it (same rules; the server checks again). */
export function problemsOf(fields, pages, parties) {
  const out = [];
  const overlaps = (a, b) =>
    a.page === b.page &&
    a.x < b.x + b.width - EPS &&
    b.x < a.x + a.width - EPS &&
    a.y < b.y + b.height - EPS &&
    b.y < a.y + a.height - EPS;
  fields.forEach((f, i) => {
    const p = pages[f.page - 1];
    if (typeof parties[f.signer] !== 'string') out.push({ field: i, code: 'no_signer' });
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

/**
 * Builds the editor in `els` ({viewer, palette, party, add, selected, problems, message, status}: the page's
 * elements) and resolves with its handle once page 1 shows. `o`: {pdf (URL), pdfjs, view (pdf-view.js URL), pages
 * ([{width, height}] in points), fields (initial), parties ([name, or null while a row names no one]), types
 * ([type]), strings, onChange(fields), prepare(field) (optional: a field about to be added, returned as it is kept)}.
 */
export async function createFieldEditor(els, o) {
  const S = o.strings;
  let fields = o.fields.map((f) => ({ ...f }));
  // A party is its name, or null while its row names no one yet (its fields are flagged).
  let parties = o.parties.slice();
  const partyName = (i) => parties[i] ?? fill(S.signerN, { n: i + 1 });
  /** A field's number as the page shows it (a template row's own), else its place in the list. */
  const numberOf = (i) => fields[i]?.n ?? i + 1;
  let selected = -1;
  let armed = o.types[0];
  const layers = new Map(); // page number → overlay element

  // ------------------------------------------------------------------ palette and toolbar
  for (const type of o.types) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'fe-type outline';
    b.dataset.type = type;
    b.textContent = S.types[type] ?? type;
    b.setAttribute('aria-pressed', String(type === armed));
    b.addEventListener('click', () => arm(type));
    b.addEventListener('pointerdown', (e) => startPaletteDrag(e, type));
    els.palette.append(b);
  }
  function arm(type) {
    armed = type;
    for (const b of els.palette.querySelectorAll('.fe-type'))
      b.setAttribute('aria-pressed', String(b.dataset.type === type));
  }
  els.add.addEventListener('click', () => {
    const page = currentPage();
    const size = DEFAULT_SIZE[armed] ?? { width: 100, height: 20 };
    const spot = freeSpot(page, size);
    add({ signer: Number(els.party.value) || 0, type: armed, page, ...spot, ...size, required: true });
  });

  function fillPartySelect(select, value) {
    select.replaceChildren(
      ...parties.map((name, i) => {
        const opt = document.createElement('option');
        opt.value = String(i);
        opt.textContent = name ?? partyName(i);
        return opt;
      }),
    );
    select.value = String(Math.min(Math.max(0, value), parties.length - 1));
  }
  fillPartySelect(els.party, 0);

  // ------------------------------------------------------------------ pages
  const { showPdf } = await import(o.view);
  let firstShown;
  const first = new Promise((r) => (firstShown = r));
  const loaded = showPdf(els.viewer, o.pdf, {
    pdfjs: o.pdfjs,
    pageLabel: (page, pages) => fill(S.pageOf, { page, pages }),
    overlay(num) {
      const layer = document.createElement('div');
      layer.className = 'fe-layer';
      layer.dataset.page = String(num);
      layers.set(num, layer);
      queueMicrotask(() => drawPage(num));
      return layer;
    },
    onFirstPage() {
      els.message.hidden = true;
      firstShown();
    },
  });
  loaded.catch(() => {
    els.message.textContent = S.loadFailed;
    els.message.classList.add('error');
    firstShown();
  });

  /** The page most in view (new fields land there). */
  function currentPage() {
    let best = 1;
    let bestArea = -1;
    for (const [num, layer] of layers) {
      const r = layer.getBoundingClientRect();
      const area = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0));
      if (area > bestArea) [best, bestArea] = [num, area];
    }
    return best;
  }
  /** A position on `page` where a box of `size` overlaps nothing, scanning down from the top-left margin. */
  function freeSpot(page, size) {
    const p = o.pages[page - 1];
    for (let y = 36; y + size.height <= p.height; y += 8)
      for (let x = 36; x + size.width <= p.width; x += 24) {
        const box = { page, x, y, ...size };
        if (
          !fields.some((f) => f.page === page && problemsOf([box, f], o.pages, ['']).some((q) => q.code === 'overlap'))
        )
          return { x, y };
      }
    return { x: 0, y: 0 };
  }

  // ------------------------------------------------------------------ drawing
  const boxes = []; // index → element
  function label(f, i) {
    return fill(S.fieldName, {
      n: numberOf(i),
      type: S.types[f.type] ?? f.type,
      signer: partyName(f.signer),
      page: f.page,
      x: Math.round(f.x),
      y: Math.round(f.y),
      width: Math.round(f.width),
      height: Math.round(f.height),
    });
  }
  function render() {
    for (const el of boxes) el.remove();
    boxes.length = 0;
    const bad = new Set(problemsOf(fields, o.pages, parties).map((p) => p.field));
    fields.forEach((f, i) => {
      const p = o.pages[f.page - 1] ?? o.pages[0];
      const el = document.createElement('div');
      const locked = f.locked ? ' locked' : '';
      el.className = `fe-field party-${Math.max(0, f.signer) % 8}${i === selected ? ' selected' : ''}${bad.has(i) ? ' bad' : ''}${locked}`;
      el.tabIndex = 0;
      el.setAttribute('role', 'button');
      // The name starts with the visible text (people who speak a command name what they see), then the details.
      const visible = `${numberOf(i)} · ${f.key || (S.types[f.type] ?? f.type)} · ${partyName(f.signer)}`;
      const fixed = f.locked ? ` ${fill(S.locked ?? '', { n: numberOf(i), marker: f.anchor ?? '' })}` : '';
      el.setAttribute('aria-label', `${visible}. ${label(f, i)}${fixed}`);
      el.setAttribute('aria-describedby', 'fe-help');
      if (bad.has(i)) el.setAttribute('aria-invalid', 'true');
      el.dataset.index = String(i);
      Object.assign(el.style, {
        left: `${(f.x / p.width) * 100}%`,
        top: `${(f.y / p.height) * 100}%`,
        width: `${(f.width / p.width) * 100}%`,
        height: `${(f.height / p.height) * 100}%`,
      });
      const text = document.createElement('span');
      text.className = 'fe-text';
      text.textContent = bad.has(i) ? `⚠ ${visible}` : visible;
      el.append(text);
      const handle = document.createElement('span');
      handle.className = 'fe-handle';
      handle.setAttribute('aria-hidden', 'true');
      if (!f.locked) el.append(handle);
      el.addEventListener('pointerdown', (e) => startBoxDrag(e, i, e.target === handle ? 'resize' : 'move'));
      el.addEventListener('keydown', (e) => onKey(e, i));
      el.addEventListener('focus', () => select(i, false));
      boxes[i] = el;
      layers.get(f.page)?.append(el);
    });
    renderProblems();
    renderSelected();
  }
  /** A redraw the page asked for: a box that had focus gets it back (the keyboard user keeps their place). */
  function redraw() {
    const focused = boxes.indexOf(document.activeElement);
    render();
    if (focused >= 0) boxes[Math.min(focused, boxes.length - 1)]?.focus();
  }
  /** A page's overlay just made: the boxes already drawn for that page go onto it. */
  function drawPage(num) {
    fields.forEach((f, i) => {
      if (f.page === num && boxes[i]) layers.get(num).append(boxes[i]);
    });
  }

  function renderProblems() {
    const list = problemsOf(fields, o.pages, parties);
    const words = (p) =>
      p.code === 'overlap'
        ? fill(S.overlap, { n: numberOf(p.field), other: numberOf(p.other) })
        : p.code === 'no_signer'
          ? fill(S.noSignerFor, { n: numberOf(p.field) })
          : fill(S.offPage, { n: numberOf(p.field) });
    els.problems.replaceChildren();
    els.problems.classList.toggle('bad', list.length > 0);
    if (fields.length === 0) {
      els.problems.textContent = S.noFieldsYet;
    } else if (list.length === 0) {
      els.problems.textContent = S.noProblems;
    } else {
      const ul = document.createElement('ul');
      for (const p of list) {
        const li = document.createElement('li');
        li.textContent = words(p);
        ul.append(li);
      }
      els.problems.append(ul);
    }
    els.onProblems?.(list);
  }

  // ------------------------------------------------------------------ the selected field's panel
  const sel = els.selected;
  // The required and label inputs are optional: a template keeps those rules in its rows.
  const input = (id) => sel.querySelector(`#${id}`) ?? document.createElement('input');
  fillPartySelect(input('fe-sel-party'), 0);
  function renderSelected() {
    const f = fields[selected];
    sel.hidden = !f;
    if (!f) return;
    if (document.activeElement !== input('fe-sel-party')) fillPartySelect(input('fe-sel-party'), f.signer);
    for (const [id, k] of [
      ['fe-sel-x', 'x'],
      ['fe-sel-y', 'y'],
      ['fe-sel-w', 'width'],
      ['fe-sel-h', 'height'],
    ]) {
      if (document.activeElement !== input(id)) input(id).value = String(f[k]);
      input(id).disabled = Boolean(f.locked);
    }
    input('fe-sel-required').checked = f.required;
    input('fe-sel-required').disabled = f.type !== 'text' && f.type !== 'checkbox';
    input('fe-sel-label').value = f.label ?? '';
    input('fe-sel-label').disabled = f.type !== 'text' && f.type !== 'checkbox';
  }
  const edit = (k, parse) => (e) => {
    const f = fields[selected];
    if (!f) return;
    const v = parse(e.target);
    if (v === undefined) return;
    f[k] = v;
    changed();
  };
  const number = (t) =>
    t.value.trim() === '' || !Number.isFinite(Number(t.value)) ? undefined : round(Number(t.value));
  input('fe-sel-party').addEventListener(
    'change',
    edit('signer', (t) => Number(t.value)),
  );
  input('fe-sel-x').addEventListener('input', edit('x', number));
  input('fe-sel-y').addEventListener('input', edit('y', number));
  input('fe-sel-w').addEventListener('input', edit('width', number));
  input('fe-sel-h').addEventListener('input', edit('height', number));
  input('fe-sel-required').addEventListener(
    'change',
    edit('required', (t) => t.checked),
  );
  input('fe-sel-label').addEventListener(
    'input',
    edit('label', (t) => t.value.slice(0, 200) || undefined),
  );
  input('fe-sel-remove').addEventListener('click', () => remove(selected));

  // ------------------------------------------------------------------ changes
  function changed(focus = false) {
    render();
    if (focus && boxes[selected]) boxes[selected].focus();
    o.onChange?.(fields.map((f) => ({ ...f })));
  }
  function select(i, redraw = true) {
    if (selected === i) return;
    selected = i;
    for (const [j, el] of boxes.entries()) el?.classList.toggle('selected', j === i);
    renderSelected();
    if (redraw) boxes[i]?.focus();
  }
  function add(f) {
    fields.push(o.prepare ? o.prepare(f) : f);
    selected = fields.length - 1;
    changed(true);
  }
  function remove(i) {
    if (!fields[i]) return;
    fields.splice(i, 1);
    selected = Math.min(i, fields.length - 1);
    els.status.textContent = fill(S.removed, { n: numberOf(i) });
    changed(true);
  }

  function onKey(e, i) {
    const f = fields[i];
    const step = e.shiftKey ? 10 : 1;
    const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key];
    if (d && f.locked) {
      e.preventDefault();
      els.status.textContent = fill(S.locked ?? '', { n: numberOf(i), marker: f.anchor ?? '' });
    } else if (d) {
      e.preventDefault();
      if (e.altKey) {
        f.width = round(Math.max(MIN, f.width + d[0]));
        f.height = round(Math.max(MIN, f.height + d[1]));
      } else {
        f.x = round(f.x + d[0]);
        f.y = round(f.y + d[1]);
      }
      changed(true);
    } else if (e.key === 'Delete' || e.key === 'Backspace') {
      e.preventDefault();
      remove(i);
    }
  }

  // ------------------------------------------------------------------ pointer: moving, resizing, dropping
  /** The point under the pointer in `page`'s points (may lie outside it). */
  function pointIn(layer, e) {
    const r = layer.getBoundingClientRect();
    const p = o.pages[Number(layer.dataset.page) - 1];
    return { x: ((e.clientX - r.left) / r.width) * p.width, y: ((e.clientY - r.top) / r.height) * p.height };
  }
  function startBoxDrag(e, i, mode) {
    if (e.button !== 0) return;
    e.preventDefault();
    select(i);
    const f = fields[i];
    if (f.locked) {
      els.status.textContent = fill(S.locked ?? '', { n: numberOf(i), marker: f.anchor ?? '' });
      return;
    }
    const layer = layers.get(f.page);
    const el = boxes[i];
    const start = pointIn(layer, e);
    const from = { ...f };
    el.setPointerCapture(e.pointerId);
    const move = (ev) => {
      const at = pointIn(layer, ev);
      if (mode === 'move') {
        f.x = round(from.x + at.x - start.x);
        f.y = round(from.y + at.y - start.y);
      } else {
        f.width = round(Math.max(MIN, from.width + at.x - start.x));
        f.height = round(Math.max(MIN, from.height + at.y - start.y));
      }
      const p = o.pages[f.page - 1];
      Object.assign(el.style, {
        left: `${(f.x / p.width) * 100}%`,
        top: `${(f.y / p.height) * 100}%`,
        width: `${(f.width / p.width) * 100}%`,
        height: `${(f.height / p.height) * 100}%`,
      });
    };
    const up = () => {
      el.removeEventListener('pointermove', move);
      el.removeEventListener('pointerup', up);
      el.removeEventListener('pointercancel', up);
      if (f.x !== from.x || f.y !== from.y || f.width !== from.width || f.height !== from.height) changed(true);
    };
    el.addEventListener('pointermove', move);
    el.addEventListener('pointerup', up);
    el.addEventListener('pointercancel', up);
  }
  function startPaletteDrag(e, type) {
    if (e.button !== 0) return;
    const size = DEFAULT_SIZE[type] ?? { width: 100, height: 20 };
    const origin = { x: e.clientX, y: e.clientY };
    let ghost = null;
    const target = e.currentTarget;
    target.setPointerCapture(e.pointerId);
    const layerAt = (ev) => {
      for (const layer of layers.values()) {
        const r = layer.getBoundingClientRect();
        if (ev.clientX >= r.left && ev.clientX <= r.right && ev.clientY >= r.top && ev.clientY <= r.bottom)
          return layer;
      }
      return null;
    };
    const move = (ev) => {
      if (!ghost && Math.hypot(ev.clientX - origin.x, ev.clientY - origin.y) < 4) return;
      const layer = layerAt(ev);
      const scale = layer ? layer.getBoundingClientRect().width / o.pages[Number(layer.dataset.page) - 1].width : 1;
      if (!ghost) {
        ghost = document.createElement('div');
        ghost.className = `fe-ghost party-${(Number(els.party.value) || 0) % 8}`;
        ghost.textContent = S.types[type] ?? type;
        ghost.setAttribute('aria-hidden', 'true');
        document.body.append(ghost);
      }
      Object.assign(ghost.style, {
        left: `${ev.clientX}px`,
        top: `${ev.clientY}px`,
        width: `${size.width * scale}px`,
        height: `${size.height * scale}px`,
      });
    };
    const up = (ev) => {
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', up);
      target.removeEventListener('pointercancel', cancel);
      if (!ghost) return; // a click: the click handler arms the type
      ghost.remove();
      const layer = layerAt(ev);
      if (!layer) return;
      // The ghost's top-left corner follows the pointer, so the field lands where the ghost was.
      const at = pointIn(layer, ev);
      arm(type);
      add({
        signer: Number(els.party.value) || 0,
        type,
        page: Number(layer.dataset.page),
        x: round(at.x),
        y: round(at.y),
        ...size,
        required: true,
      });
    };
    const cancel = () => {
      ghost?.remove();
      ghost = null;
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', up);
    };
    target.addEventListener('pointermove', move);
    target.addEventListener('pointerup', up);
    target.addEventListener('pointercancel', cancel);
  }

  render();
  await first;
  return {
    get fields() {
      return fields.map((f) => ({ ...f }));
    },
    problems: () => problemsOf(fields, o.pages, parties),
    /** New names for the parties (a signer typed); fields of a party that is gone are flagged. */
    setParties(names) {
      parties = names.slice();
      fillPartySelect(els.party, Number(els.party.value) || 0);
      redraw();
    },
    /** The fields as the page now has them (a row typed); no onChange, the page already knows. */
    setFields(list) {
      fields = list.map((f) => ({ ...f }));
      if (selected >= fields.length) selected = fields.length - 1;
      redraw();
    },
    loaded,
  };
}
