// Forms as a browser posts them, for dashboard tests: the fields a rendered form would post (inputs, checked boxes,
// selected options), read from its HTML. (A multipart post is the client's: testing/client.ts postMultipart.)
import assert from 'node:assert/strict';

/** The form fields of a page's editor table and other inputs (name → value), as a browser would post them. */
export function formFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input ([^>]*)>/g)) {
    const attrs = m[1]!;
    const name = /name="([^"]+)"/.exec(attrs)?.[1];
    if (!name || name === '_csrf' || name === 'pdf') continue;
    if (/type="checkbox"/.test(attrs)) {
      if (/ checked/.test(attrs)) out[name] = /value="([^"]*)"/.exec(attrs)?.[1] ?? 'on';
      continue;
    }
    out[name] = (/value="([^"]*)"/.exec(attrs)?.[1] ?? '').replace(/&#123;/g, '{').replace(/&#125;/g, '}');
  }
  for (const m of html.matchAll(/<select [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g))
    out[m[1]!] = /<option value="([^"]*)" selected>/.exec(m[2]!)?.[1] ?? '';
  return out;
}

/** The field row index whose key is `key` in posted fields. */
export const rowOf = (f: Record<string, string>, key: string) => {
  const k = Object.keys(f).find((n) => /^f\.\d+\.key$/.test(n) && f[n] === key);
  assert.ok(k, `a row for ${key}`);
  return k.split('.')[1]!;
};
export const unescape = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');
