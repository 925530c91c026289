// Text as it is drawn: one line, whitespace collapsed, invisible characters removed (cleanText). No PDF library,
// so the calling thread's checks (stamp.ts: an empty typed signature) and the drawing (fonts.ts) clean text alike.

// Controls, bidi controls, joiners and variation selectors would only render as boxes.
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class -- the variation selectors are listed to be removed alone
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufe00-\ufe0f\ufeff]/gu;

/** One line of drawable text: whitespace collapsed, invisible characters removed. */
export function cleanText(text: string): string {
  return text.replace(INVISIBLE, '').replace(/\s+/gu, ' ').trim();
}
