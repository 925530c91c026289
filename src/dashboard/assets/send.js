// The draft page's behaviour: the field editor (field-editor.js) in place of the no-script table of fields, the
// signers' names as the editor's parties, autosave (the form and fields as JSON, with the CSRF token, a moment after
// each change), and the Send button held back while a field has a problem (the server checks again). Without this
// script the page is a plain form: the table of fields, Save and Send.
const $ = (id) => document.getElementById(id);
const data = JSON.parse($('editor-data').textContent);
const S = data.strings;
const form = $('draft-form');
const csrf = form.querySelector('input[name="_csrf"]').value;
const statusLine = $('fe-status');
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));

/** The signers' rows as the editor names them: name, else e-mail, else null (a row that names no one yet). */
const partyNames = () =>
  [...document.querySelectorAll('.signer-row')].map((row, i) => {
    const v = (k) => row.querySelector(`[name="signers.${i}.${k}"]`)?.value.trim();
    return v('name') || v('email') || (v('phone') ? fill(S.signerN, { n: i + 1 }) : null);
  });

/** The form's fields as a flat object (`signers.0.name`, …), without the CSRF token and the table's inputs. */
function formValues() {
  const out = {};
  for (const [k, v] of new FormData(form))
    if (k !== '_csrf' && !k.startsWith('fields.') && typeof v === 'string') out[k] = v;
  return out;
}

let editor = null;
let timer = null;
let saving = Promise.resolve();
function scheduleSave() {
  clearTimeout(timer);
  timer = setTimeout(save, 600);
}
function save() {
  clearTimeout(timer);
  timer = null;
  const body = JSON.stringify({ _csrf: csrf, form: formValues(), fields: editor ? editor.fields : data.fields });
  saving = saving.then(async () => {
    try {
      const r = await fetch(data.save, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        credentials: 'same-origin',
        body,
      });
      if (!r.ok) throw new Error(String(r.status));
      const { saved_at } = await r.json();
      statusLine.textContent = fill(S.saved, { time: new Date(saved_at).toLocaleTimeString() });
      statusLine.dataset.saved = saved_at;
      statusLine.dataset.saves = String(Number(statusLine.dataset.saves ?? 0) + 1);
      statusLine.classList.remove('bad');
    } catch {
      statusLine.textContent = S.notSaved;
      statusLine.classList.add('bad');
    }
  });
  return saving;
}

async function start() {
  const table = $('field-table');
  const root = $('editor');
  root.hidden = false;
  table.hidden = true;
  for (const el of table.querySelectorAll('input, select')) el.disabled = true;
  // The form posts the editor's fields as one JSON value (the table is disabled and sends nothing).
  const hidden = Object.assign(document.createElement('input'), { type: 'hidden', name: 'fields_json' });
  form.append(hidden);
  const sendButton = $('send-button');
  editor = await import(data.editor).then(({ createFieldEditor }) =>
    createFieldEditor(
      {
        viewer: $('fe-viewer'),
        palette: $('fe-palette'),
        party: $('fe-party'),
        add: $('fe-add'),
        selected: $('fe-selected'),
        problems: $('fe-problems'),
        message: $('fe-message'),
        status: statusLine,
        onProblems(list) {
          sendButton.disabled = list.length > 0;
        },
      },
      {
        pdf: data.pdf,
        pdfjs: data.pdfjs,
        view: data.pdfjs.view,
        pages: data.pages,
        fields: data.fields,
        parties: partyNames(),
        types: Object.keys(S.types),
        strings: S,
        onChange: scheduleSave,
      },
    ),
  );
  form.addEventListener('input', (e) => {
    if (e.target.closest('#editor')) return;
    if (e.target.closest('.signer-row')) editor.setParties(partyNames());
    scheduleSave();
  });
  form.addEventListener('submit', () => {
    clearTimeout(timer);
    timer = null;
    hidden.value = JSON.stringify(editor.fields);
  });
  // Leaving the page right after a change: the last save goes out with the page.
  addEventListener('pagehide', () => {
    if (timer === null) return;
    clearTimeout(timer);
    const blob = new Blob([JSON.stringify({ _csrf: csrf, form: formValues(), fields: editor.fields })], {
      type: 'application/json',
    });
    navigator.sendBeacon?.(data.save, blob);
  });
  document.body.dataset.editor = 'ready';
}

start().catch(() => {
  // Back to the plain form: the table of fields works without the editor.
  $('editor').hidden = true;
  $('field-table').hidden = false;
  for (const el of $('field-table').querySelectorAll('input, select')) el.disabled = false;
  form.querySelector('input[name="fields_json"]')?.remove();
});
