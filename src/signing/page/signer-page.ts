// Server-rendered signer pages. Every interpolated value is escaped; the token only appears in same-origin URLs.
import type { signerView } from '../signing.service.js';

type View = Awaited<ReturnType<typeof signerView>>;

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderSignerPage(v: View, token: string): string {
  const base = `/sign/${encodeURIComponent(token)}`;
  return `<!doctype html><html lang="${esc(v.document.locale)}"><head><meta charset="utf-8"><title>${esc(v.document.title)}</title></head>
<body data-base="${esc(base)}"><h1>${esc(v.document.title)}</h1><p>${esc(v.request.name)}</p></body></html>`;
}

export function renderClosedPage(locale: string, state: string): string {
  return `<!doctype html><html lang="${esc(locale)}"><head><meta charset="utf-8"><title>Signet</title></head><body><p data-state="${esc(state)}">This request is no longer open (${esc(state)}).</p></body></html>`;
}
