// Worker side of audit-page.ts (whose header states the guarantees): the layout, drawn with pdf-lib and the fonts.
// Runs only in a PDF worker thread: imported by pdf.worker.ts (and tests), never by a main-thread module.
import { fill, strings } from '../../i18n/i18n.js';
import type { AuditCertificateInput, AuditInfo } from './audit-page.js';
import { type FontStyle, Fonts, codePointList } from './fonts.js';
import { pageGeometry } from './geometry.js';
import { PDFDocument, type PDFPage, rgb } from './pdf-lib.js';
import { saveIncremental, snapshotObjects } from './pdflib-incremental.js';

/** Worker side of appendAuditPage. */
export async function appendAuditPageInWorker(
  bytes: Uint8Array,
  audit: AuditInfo,
  opts: { incremental?: boolean } = {},
): Promise<Uint8Array> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const loaded = opts.incremental ? snapshotObjects(doc, bytes) : null;
  const last = pageGeometry(doc.getPage(doc.getPageCount() - 1));
  const size: [number, number] = last.width >= 400 && last.height >= 500 ? [last.width, last.height] : [612, 792];
  const w = new Writer(doc, size, audit);
  await w.start();
  await writeAudit(w, audit);
  await w.finish();
  return loaded ? saveIncremental(doc, loaded) : doc.save({ useObjectStreams: false });
}

/** Worker side of renderAuditCertificate. */
export async function renderAuditCertificateInWorker(input: AuditCertificateInput): Promise<Uint8Array> {
  const s = strings(input.locale, 'audit');
  const doc = await PDFDocument.create();
  doc.setTitle(fill(s.pdfTitle, { title: input.title }));
  doc.setCreator('Signet');
  const w = new Writer(doc, [612, 792], input);
  await w.start();
  await writeAudit(w, input);
  await w.heading(fill(s.events, { count: input.events.length }));
  for (const e of input.events) {
    const who = [e.actor, e.ip ? fill(s.eventIp, { ip: e.ip }) : null].filter(Boolean).join(' · ');
    await w.row(e.at, [e.event, who, e.detail ?? ''].filter((part) => part !== '').join(' — '), {
      labelWidth: 150,
      labelStyle: 'mono',
    });
  }
  await w.finish();
  return doc.save({ useObjectStreams: false });
}

async function writeAudit(w: Writer, a: AuditInfo): Promise<void> {
  const s = strings(a.locale, 'audit');
  if (a.face?.logo) await w.logo(a.face.logo);
  await w.title(s.title);
  await w.heading(s.document);
  await w.row(s.documentTitle, a.title);
  await w.row(s.documentId, a.documentId);
  await w.row(s.originalSha256, a.originalSha256, { valueStyle: 'mono' });
  await w.row(s.completed, a.completedAt ?? s.notCompleted);
  if (a.face?.region) await w.row(s.region, a.face.region);
  await w.heading(fill(s.signers, { count: a.signers.length }));
  for (const [i, signer] of a.signers.entries()) {
    // Keep a signer's block together when it fits on a page.
    await w.ensure((8 + (signer.verified ? 1 : 0) + (signer.qualified ? 5 : 0)) * 14 + 20);
    await w.line(`${i + 1}. ${signer.name} (${signer.role})`, { style: 'bold', size: 11, after: 4, record: true });
    await w.row(s.email, signer.email);
    await w.row(s.role, signer.role);
    await w.row(s.ip, signer.ip ?? '—');
    await w.row(s.userAgent, signer.userAgent ?? '—');
    await w.row(s.sent, signer.sentAt ?? '—');
    await w.row(s.viewed, signer.viewedAt ?? '—');
    await w.row(s.signed, signer.signedAt ?? '—');
    if (signer.verified) {
      const how = signer.verified.method === 'sms_code' ? s.verifiedSms : s.verifiedEmail;
      await w.row(s.identityVerified, fill(how, { time: signer.verified.at }));
    }
    if (signer.qualified) {
      const q = signer.qualified;
      await w.row(s.qualifiedSignature, q.provider);
      await w.row(s.certificate, q.subject);
      await w.row(s.certificateIssuer, q.issuer);
      await w.row(s.certificateSerial, q.serial, { valueStyle: 'mono' });
    }
    w.space(10);
  }
}

const MARGIN = 54;
/** The logo's box in the header, in points: it keeps its proportions inside. */
const LOGO_MAX = { width: 160, height: 40 };
const GREY = rgb(0.4, 0.4, 0.45);
const BODY = 9.5;
const LEADING = 1.35;

/** Top-down text layout on fresh, unrotated pages (so shown space is user space). */
class Writer {
  private readonly fonts: Fonts;
  private readonly pages: PDFPage[] = [];
  private page!: PDFPage;
  private y = 0; // distance from the top of the page

  /** Each page's footer names the document: `a`'s id, in `a`'s language. */
  constructor(
    private readonly doc: PDFDocument,
    private readonly size: [number, number],
    private readonly a: Pick<AuditInfo, 'locale' | 'documentId'>,
  ) {
    // The page is laid out left to right; a right-to-left value still reads right to left inside its line.
    this.fonts = new Fonts(doc, { dir: 'ltr' });
  }

  private get width() {
    return this.size[0] - 2 * MARGIN;
  }

  async start(): Promise<void> {
    this.newPage();
  }

  private newPage(): void {
    this.page = this.doc.addPage(this.size);
    this.pages.push(this.page);
    this.y = MARGIN;
  }

  /** Starts a new page unless `height` points are left above the footer. */
  async ensure(height: number): Promise<void> {
    if (this.y + height > this.size[1] - MARGIN - 12 && this.y > MARGIN) this.newPage();
  }

  space(h: number): void {
    this.y += h;
  }

  async line(
    text: string,
    o: {
      style?: FontStyle;
      size?: number;
      x?: number;
      color?: ReturnType<typeof rgb>;
      after?: number;
      /** Follow the line with the code points no font has, if any (see `unmapped`). */
      record?: boolean;
    } = {},
  ): Promise<void> {
    const size = o.size ?? BODY;
    await this.ensure(size * LEADING);
    await this.fonts.draw(this.page, text, {
      x: o.x ?? MARGIN,
      y: this.size[1] - this.y - size,
      size,
      style: o.style,
      color: o.color,
    });
    this.y += size * LEADING + (o.after ?? 0);
    if (o.record) await this.unmapped(text, o.x);
  }

  /**
   * Where a value has characters no embedded font has (drawn as □), a grey line lists their code points, so the
   * certificate still records the exact text.
   */
  async unmapped(text: string, x = MARGIN): Promise<void> {
    const missing = this.fonts.missing(text);
    if (missing.length === 0) return;
    const note = fill(strings(this.a.locale, 'audit').unmapped, { codes: codePointList(missing) });
    for (const l of await this.fonts.wrap(note, 'regular', 7.5, this.size[0] - MARGIN - x))
      await this.line(l, { x, size: 7.5, color: GREY });
    this.space(3);
  }

  /** The workspace's logo at the top of the page; one that pdf-lib cannot read is left out. */
  async logo(logo: NonNullable<NonNullable<AuditInfo['face']>['logo']>): Promise<void> {
    let image: Awaited<ReturnType<PDFDocument['embedPng']>>;
    try {
      image = logo.type === 'image/png' ? await this.doc.embedPng(logo.bytes) : await this.doc.embedJpg(logo.bytes);
    } catch {
      return;
    }
    const scale = Math.min(LOGO_MAX.width / image.width, LOGO_MAX.height / image.height, 1);
    const [width, height] = [image.width * scale, image.height * scale];
    await this.ensure(height + 12);
    this.page.drawImage(image, { x: MARGIN, y: this.size[1] - this.y - height, width, height });
    this.y += height + 12;
  }

  async title(text: string): Promise<void> {
    const lines = await this.fonts.wrap(text, 'bold', 18, this.width);
    for (const l of lines) await this.line(l, { style: 'bold', size: 18 });
    await this.unmapped(text);
    this.space(6);
  }

  async heading(text: string): Promise<void> {
    await this.ensure(40);
    this.space(8);
    await this.line(text, { style: 'bold', size: 12, after: 2 });
    this.page.drawLine({
      start: { x: MARGIN, y: this.size[1] - this.y },
      end: { x: this.size[0] - MARGIN, y: this.size[1] - this.y },
      thickness: 0.5,
      color: GREY,
    });
    this.space(6);
  }

  /** A label and a value; the value wraps in its column and may continue on the next page. */
  async row(
    label: string,
    value: string,
    o: { labelWidth?: number; labelStyle?: FontStyle; valueStyle?: FontStyle } = {},
  ): Promise<void> {
    const lw = o.labelWidth ?? 100;
    const valueStyle = o.valueStyle ?? 'regular';
    const valueSize = valueStyle === 'mono' ? 8.5 : BODY;
    const lines = await this.fonts.wrap(value === '' ? '—' : value, valueStyle, valueSize, this.width - lw);
    const labelLines = await this.fonts.wrap(label, o.labelStyle ?? 'regular', 8.5, lw - 6);
    await this.ensure(BODY * LEADING * Math.min(lines.length, 3));
    const top = this.y;
    for (const l of labelLines) await this.line(l, { size: 8.5, style: o.labelStyle, color: GREY });
    const afterLabel = this.y;
    const samePage = this.pages[this.pages.length - 1];
    this.y = top;
    for (const l of lines) await this.line(l, { x: MARGIN + lw, size: valueSize, style: valueStyle });
    await this.unmapped(value, MARGIN + lw);
    if (this.page === samePage) this.y = Math.max(this.y, afterLabel);
    this.space(1.5);
  }

  async finish(): Promise<void> {
    const n = this.pages.length;
    for (const [i, p] of this.pages.entries()) {
      const footer = fill(strings(this.a.locale, 'audit').footer, { id: this.a.documentId, page: i + 1, pages: n });
      const text = await this.fonts.truncate(footer, 'regular', 7.5, this.width);
      await this.fonts.draw(p, text, { x: MARGIN, y: MARGIN / 2, size: 7.5, color: GREY });
    }
  }
}
