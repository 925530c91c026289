// PDFs with hand-written page content for the marker-removal tests: the content stream is given as text, with
// fonts of three kinds on every page and Form XObjects beside it:
//   /F1 Helvetica, a standard font without /Widths (WinAnsi);
//   /F2 DejaVu Sans through fontkit, a Type0 font with Identity-H (2-byte codes) and a ToUnicode map;
//   /F3 Helvetica with /Widths and an /Encoding whose /Differences put "{" at code 1 and "}" at code 2.
// The build gets `hex(font, text)`, the <…> string that shows `text` in that font, and `width(font, text, size)`,
// its advance in points (no Tc, Tw or kerning).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, PDFName, type PDFRef, StandardFonts } from 'pdf-lib';

export type FontKey = 'F1' | 'F2' | 'F3';
export type ContentTools = {
  hex: (font: FontKey, text: string) => string;
  width: (font: FontKey, text: string, size: number) => number;
};
export type ContentBuild = (tools: ContentTools) => {
  page: string;
  /** Form XObjects by name (/X1 …); a form's content may draw another form of this list. */
  forms?: Record<string, string>;
};

const dejavu = () => {
  const dir = path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json'));
  return readFileSync(path.join(dir, 'ttf', 'DejaVuSans.ttf'));
};

export async function contentPdf(build: ContentBuild, size: [number, number] = [612, 792]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.registerFontkit(fontkit);
  const helv = await doc.embedFont(StandardFonts.Helvetica);
  const deja = await doc.embedFont(dejavu(), { subset: true });
  const codes = (t: string) => [...t].map((ch) => (ch === '{' ? 1 : ch === '}' ? 2 : ch.charCodeAt(0)));
  const f3 = doc.context.register(
    doc.context.obj({
      Type: 'Font',
      Subtype: 'Type1',
      BaseFont: 'Helvetica',
      FirstChar: 0,
      LastChar: 255,
      Widths: Array.from({ length: 256 }, (_, c) => {
        const ch = c === 1 ? '{' : c === 2 ? '}' : c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : ' ';
        return helv.widthOfTextAtSize(ch, 1000);
      }),
      Encoding: { Type: 'Encoding', BaseEncoding: 'WinAnsiEncoding', Differences: [1, 'braceleft', 'braceright'] },
    }),
  );
  const hex = (font: FontKey, text: string): string => {
    if (font === 'F1') return helv.encodeText(text).toString();
    if (font === 'F2') return deja.encodeText(text).toString();
    return `<${Buffer.from(codes(text)).toString('hex')}>`;
  };
  const width = (font: FontKey, text: string, size: number) =>
    (font === 'F2' ? deja : helv).widthOfTextAtSize(text, size);
  const { page: content, forms = {} } = build({ hex, width });
  const page = doc.addPage(size);
  const fonts = doc.context.obj({ F1: helv.ref, F2: deja.ref, F3: f3 });
  const xobjects = doc.context.obj({});
  const resources = doc.context.obj({ Font: fonts, XObject: xobjects });
  for (const [name, text] of Object.entries(forms)) {
    const form = doc.context.stream(text, {
      Type: 'XObject',
      Subtype: 'Form',
      BBox: [0, 0, size[0], size[1]],
      Resources: resources,
    });
    xobjects.set(PDFName.of(name), doc.context.register(form) as PDFRef);
  }
  page.node.set(PDFName.of('Resources'), resources);
  page.node.set(PDFName.of('Contents'), doc.context.register(doc.context.flateStream(content)));
  return doc.save({ useObjectStreams: false });
}
