// Logo files for tests, made in code: PNGs (documents/pdf/testing/fixtures.ts's encoder) with chunks added, a
// real baseline JPEG of one flat grey (each 8×8 block is a zero DC difference and an end-of-block: two bits, with
// Huffman tables of one code each), and the GIF and SVG files a logo must not be.
import { crc32 } from 'node:zlib';
import { makePng } from '../../documents/pdf/testing/fixtures.js';

export { makePng };

const u16 = (n: number) => [(n >> 8) & 255, n & 255];

function pngChunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** `png` with chunks inserted right after IHDR (and, with `trailer`, bytes after IEND). */
export function pngWithChunks(png: Uint8Array, chunks: [string, string | Uint8Array][], trailer?: string): Uint8Array {
  const afterIhdr = 8 + 25;
  const extra = chunks.map(([t, d]) => pngChunk(t, typeof d === 'string' ? Buffer.from(d, 'latin1') : d));
  return new Uint8Array(
    Buffer.concat([png.subarray(0, afterIhdr), ...extra, png.subarray(afterIhdr), Buffer.from(trailer ?? '')]),
  );
}

/** A solid-colour RGBA PNG. */
export const solidPng = (width: number, height: number, rgba: [number, number, number, number] = [30, 60, 140, 255]) =>
  makePng(width, height, () => rgba);

/** The chunk types of a PNG, in order. */
export function pngChunkTypes(png: Uint8Array): string[] {
  const b = Buffer.from(png);
  const out: string[] = [];
  for (let at = 8; at + 8 <= b.length; at += 12 + b.readUInt32BE(at)) out.push(b.toString('latin1', at + 4, at + 8));
  return out;
}

const segment = (marker: number, body: number[] | Uint8Array) => [0xff, marker, ...u16(body.length + 2), ...body];

/** A baseline greyscale JPEG of `width`×`height`, optionally with an EXIF APP1 and a comment before the frame. */
export function makeJpeg(width: number, height: number, o: { exif?: string; comment?: string } = {}): Uint8Array {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = blocks * 2;
  const scan = new Uint8Array(Math.ceil(bits / 8)).fill(0);
  // Pad the last byte with 1 bits, as the standard asks.
  const pad = scan.length * 8 - bits;
  if (pad > 0) scan[scan.length - 1] = (1 << pad) - 1;
  const counts = (n: number) => [1, ...Array<number>(15).fill(0)].map((c, i) => (i === 0 ? n : c));
  const bytes = [
    0xff,
    0xd8,
    ...segment(0xe0, [...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    ...(o.exif ? segment(0xe1, [...Buffer.from('Exif\0\0'), ...Buffer.from(o.exif)]) : []),
    ...(o.comment ? segment(0xfe, [...Buffer.from(o.comment)]) : []),
    ...segment(0xdb, [0, ...Array<number>(64).fill(1)]),
    ...segment(0xc0, [8, ...u16(height), ...u16(width), 1, 1, 0x11, 0]),
    ...segment(0xc4, [0x00, ...counts(1), 0]), // DC table 0: one code "0" for category 0
    ...segment(0xc4, [0x10, ...counts(1), 0]), // AC table 0: one code "0" for end of block
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    ...scan,
    0xff,
    0xd9,
  ];
  return new Uint8Array(bytes);
}

/** The marker bytes of a JPEG's segments before its scan data, in order. */
export function jpegMarkers(jpeg: Uint8Array): number[] {
  const out: number[] = [];
  for (let at = 2; at + 4 <= jpeg.length;) {
    const m = jpeg[at + 1]!;
    out.push(m);
    if (m === 0xda || m === 0xd9) break;
    at += 2 + ((jpeg[at + 2]! << 8) | jpeg[at + 3]!);
  }
  return out;
}

export const GIF = new Uint8Array(
  Buffer.from('47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b', 'hex'),
);
export const SVG = new Uint8Array(
  Buffer.from(
    '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
  ),
);
