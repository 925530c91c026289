// Forms as a browser posts them, for dashboard tests: a multipart form (with a file), and the fields a rendered form
// would post (inputs, checked boxes, selected options), read from its HTML.
import assert from 'node:assert/strict';
import type { E2E } from '../../testing/e2e.js';
import type { Res } from '../../testing/harness.js';
import type { DashboardClient } from './client.js';

/** Posts a multipart form as a browser does (the CSRF token of the client's last page unless `csrf: null`). */
export async function postMultipart(
  e: E2E,
  c: DashboardClient,
  path: string,
  fields: Record<string, string>,
  file?: { field: string; name: string; bytes: Uint8Array },
  o: { csrf?: string | null } = {},
): Promise<Res> {
  const fd = new FormData();
  const token = o.csrf === undefined ? c.csrf() : o.csrf;
  if (token) fd.append('_csrf', token);
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  if (file) fd.append(file.field, new Blob([Buffer.from(file.bytes)], { type: 'application/pdf' }), file.name);
  const req = new Request('http://x/', { method: 'POST', body: fd });
  const res = await e.h.request('POST', path, {
    rawBody: Buffer.from(await req.arrayBuffer()),
    headers: {
      accept: 'text/html',
      'content-type': req.headers.get('content-type')!,
      cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    },
  });
  return res;
}

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
