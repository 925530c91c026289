// Child process of engine.test.ts: starts the real app (startHarness), runs every PdfEngine operation and a seal once on the
// inputs the test wrote to the folder argv[2], and prints (last line, JSON) what each returned and which scripts of
// a PDF library its main thread compiled. It imports no fixture (they use pdf-lib). The inspector's Debugger
// domain reports every script this thread's V8 parses, whatever loaded it (ES modules, require()d CommonJS
// bundles, require()d ES modules), and none parsed by a worker thread, which has its own V8 isolate.
import fs from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

/** pdf-lib and its own packages (fontkit among them), @signpdf, pdf.js, and this folder's modules that load them. */
const PDF_LIBRARY =
  /\/node_modules\/(pdf-lib|@pdf-lib|@signpdf|pdfjs-dist|fontkit)\/|\/documents\/pdf\/(pdf-lib|fonts|pdfjs|pdf\.worker|[\w-]+\.work)\.[jt]s$/;

const parsed = new Set<string>();
const session = new Session();
session.connect();
session.on('Debugger.scriptParsed', (m) => {
  if (m.params.url) parsed.add(m.params.url);
});
await new Promise<void>((resolve, reject) => session.post('Debugger.enable', (err) => (err ? reject(err) : resolve())));
const pdfScripts = () => [...parsed].filter((u) => PDF_LIBRARY.test(u)).sort();

// Imported only now, so the session sees them and everything they import.
const { startHarness } = await import('../../../testing/harness.js');
const { pdfEngine } = await import('../engine.js');

const dir = process.argv[2]!;
const pdf = new Uint8Array(fs.readFileSync(path.join(dir, 'doc.pdf')));
const png = new Uint8Array(fs.readFileSync(path.join(dir, 'sig.png')));
const isPdf = (b: Uint8Array) => Buffer.from(b.subarray(0, 5)).toString('latin1') === '%PDF-';

const h = await startHarness();
const out: Record<string, unknown> = {};
try {
  out.inspect = (await pdfEngine.inspect(pdf)).pageCount;
  const preview = await pdfEngine.preview(pdf, ['a']);
  out.preview = { anchors: preview.anchors.length, problems: preview.problems.length };
  const prepared = await pdfEngine.prepare(pdf, { mode: 'anchors', roles: ['a'] });
  out.prepare = prepared.fields.map((f) => f.type);
  const placed = await pdfEngine.placeTemplate(pdf, [{ key: 'name', type: 'text', anchor: '[[NAME]]' }]);
  out.placeTemplate = placed.fields.map((f) => f.key);
  const stamped = await pdfEngine.stamp(
    prepared.pdf,
    prepared.fields.map((field) => ({
      field,
      value: field.type === 'signature' ? { kind: 'drawn', png } : { kind: 'text', text: 'Ada Lovelace' },
    })),
  );
  out.stamp = isPdf(stamped);
  const audit = {
    locale: 'en' as const,
    documentId: 'doc_1',
    title: 'Probe',
    originalSha256: '0'.repeat(64),
    completedAt: '2026-11-22T10:00:00.000Z',
    signers: [
      {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        role: 'a',
        ip: '203.0.113.1',
        userAgent: 'probe',
        sentAt: null,
        viewedAt: null,
        signedAt: '2026-11-22T10:00:00.000Z',
      },
    ],
  };
  out.appendAuditPage = isPdf(await pdfEngine.appendAuditPage(stamped, audit));
  out.auditCertificate = isPdf(
    await pdfEngine.auditCertificate(audit, [{ at: '2026-11-22T10:00:00.000Z', event: 'document.completed' }]),
  );
  // Sealing as the runtime loads it (runtime.ts): the PKI and the sealer on first use.
  const [{ loadOrCreatePki }, { createSealer }] = await Promise.all([
    import('../../../pki/pki.js'),
    import('../seal.js'),
  ]);
  const pki = await loadOrCreatePki({ dataDir: path.join(dir, 'data'), clock: h.clock });
  const sealer = createSealer({ pki, clock: h.clock });
  try {
    out.seal = isPdf((await sealer.seal(stamped)).pdf);
  } finally {
    await sealer.close();
  }
} finally {
  await h.close();
}
const loaded = pdfScripts();

// The control: loading the libraries here must show in the same list, or the check above proves nothing.
const { Fonts } = await import('../fonts.js');
const { PDFDocument } = await import('../pdf-lib.js');
new Fonts(await PDFDocument.create());
const { openWithPdfjs } = await import('../pdfjs.js');
await (await openWithPdfjs(pdf)).destroy();
const control = pdfScripts();

session.disconnect();
console.log(JSON.stringify({ out, loaded, control }));
