// A workspace's face on the pages a signer or reviewer sees (issue 27): its logo, its accent colour, and Signet named
// as the service. Guarantees: the only thing that reaches CSS is a colour matching `#rrggbb` exactly (anything else
// is ignored, so the page keeps Signet's own colours); the logo is an <img> of a same-origin path whose alt text is
// the workspace's name; with neither a colour nor a logo every helper here returns nothing, so the page is as before.
import { createHash } from 'node:crypto';
import { t, type Locale } from '../i18n/i18n.js';
import { esc } from './html.js';

/** What a page needs of a workspace's brand (workspaces/brand.ts's `Brand` is one). */
export type PageBrand = { name: string; color: string | null; logo: { path: string } | null };

const HEX = /^#[0-9a-f]{6}$/i;

/** The accent colour as lowercase `#rrggbb`, or null when there is none or it is not exactly that shape. */
export const accentOf = (b: Pick<PageBrand, 'color'> | null | undefined): string | null =>
  b?.color && HEX.test(b.color) ? b.color.toLowerCase() : null;

/** A same-origin logo path (one leading slash, no scheme, no protocol-relative `//`), or null. */
const logoOf = (b: PageBrand | null | undefined): string | null =>
  b?.logo && /^\/(?!\/)[^\s"'<>\\]*$/.test(b.logo.path) ? b.logo.path : null;

/** Whether the workspace changes anything on its pages: a usable colour or logo. */
export const isBranded = (b: PageBrand | null | undefined): b is PageBrand =>
  accentOf(b) !== null || logoOf(b) !== null;

/** `#rrggbb` mixed with black: the hover shade of a button in the accent colour (as dark or darker, never lighter). */
export function darker(hex: string, keep = 0.8): string {
  const n = parseInt(hex.slice(1), 16);
  const ch = (shift: number) =>
    Math.round(((n >> shift) & 0xff) * keep)
      .toString(16)
      .padStart(2, '0');
  return `#${ch(16)}${ch(8)}${ch(0)}`;
}

/**
 * The style element that sets the accent: the stylesheets read `--primary` (buttons, links, focus ring, the header's
 * accent line) and `--primary-dark` (hover). Empty without a colour. Pages whose CSP already allows inline styles
 * (the PDF viewer's pages) take it as it is; others allow exactly this element by `brandStyleSource`.
 */
export function brandStyle(b: PageBrand | null | undefined): string {
  const c = accentOf(b);
  return c ? `<style>${styleText(c)}</style>` : '';
}

const styleText = (c: string) => `:root{--primary:${c};--primary-dark:${darker(c)};--brand-accent:${c}}`;

/** The CSP source allowing `brandStyle`'s element by its hash (`sha256-…`), or null without a colour. */
export function brandStyleSource(b: PageBrand | null | undefined): `sha256-${string}` | null {
  const c = accentOf(b);
  return c ? `sha256-${createHash('sha256').update(styleText(c)).digest('base64')}` : null;
}

/** The logo, or nothing: an <img> whose alt text is the workspace name (it stands for the name). */
export function brandLogo(b: PageBrand | null | undefined, className = 'brand-logo'): string {
  const path = logoOf(b);
  return path && b ? `<img class="${esc(className)}" src="${esc(path)}" alt="${esc(b.name)}">` : '';
}

/**
 * Signet named as the service beside the workspace that sent the link ("via Signet"), so a signer can tell who runs
 * the page; only on a branded page (an unbranded one is Signet's already).
 */
export function viaService(b: PageBrand | null | undefined, locale: Locale): string {
  return isBranded(b) ? ` <span class="via-service">${esc(t(locale, 'page.viaService'))}</span>` : '';
}

/** The class a branded page's header adds (its accent line), with its leading space; else nothing. */
export const brandedClass = (b: PageBrand | null | undefined): string => (isBranded(b) ? ' branded' : '');
