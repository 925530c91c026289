// Page content streams (ISO 32000-1 §7.8.2) as operators with their operands and byte ranges, over pdf-syntax.ts's
// lexer, so an editor can replace single operators and keep every other byte as it was. Inline images (BI … ID
// data EI) are one operator whose data is skipped. Anything malformed throws PdfSyntaxError.
import { Lexer, PdfSyntaxError, type PdfValue, isWhite } from './pdf-syntax.js';

/** One operator; `start` is its first operand's offset (or its own), `end` is just after the operator. */
export type Op = { op: string; args: PdfValue[]; start: number; end: number };

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;
/** A page has far fewer operators than this; more is a hostile stream. */
const MAX_OPS = 2_000_000;

export function parseContent(buf: Uint8Array): Op[] {
  const lx = new Lexer(buf);
  const ops: Op[] = [];
  let args: PdfValue[] = [];
  let argStart = -1;
  for (;;) {
    lx.skipWs();
    if (lx.pos >= buf.length) break;
    const start = lx.pos;
    const c = buf[start];
    const word = c === 0x2f || c === 0x28 || c === 0x3c || c === 0x5b ? null : lx.peekWord();
    if (word === null || NUMBER.test(word) || word === 'true' || word === 'false' || word === 'null') {
      if (word === null && !(c === 0x2f || c === 0x28 || c === 0x3c || c === 0x5b))
        throw new PdfSyntaxError(`unexpected byte in content at ${start}`);
      args.push(lx.value());
      if (argStart < 0) argStart = start;
      continue;
    }
    lx.pos += word.length;
    if (word === 'BI') skipInlineImage(lx);
    ops.push({ op: word, args, start: argStart < 0 ? start : argStart, end: lx.pos });
    if (ops.length > MAX_OPS) throw new PdfSyntaxError('too many operators in a content stream');
    args = [];
    argStart = -1;
  }
  if (args.length > 0) throw new PdfSyntaxError('operands without an operator at the end of a content stream');
  return ops;
}

/** After BI: the image dictionary, ID, one white-space byte, the data, then EI standing alone. */
function skipInlineImage(lx: Lexer): void {
  while (lx.peekWord() !== 'ID') {
    if (lx.pos >= lx.buf.length) throw new PdfSyntaxError('inline image without ID');
    lx.value();
  }
  lx.pos += 3;
  const b = lx.buf;
  for (let i = lx.pos; i + 1 < b.length; i++) {
    if (b[i] === 0x45 && b[i + 1] === 0x49 && isWhite(b[i - 1]) && (i + 2 === b.length || isWhite(b[i + 2]))) {
      lx.pos = i + 2;
      return;
    }
  }
  throw new PdfSyntaxError('inline image without EI');
}
