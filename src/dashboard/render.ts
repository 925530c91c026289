// What every dashboard page gets: the signed-in person, a fresh CSRF token, the versioned asset URLs, the date
// formatters and its words in the visitor's language (Accept-Language, per request); and the form-reading and
// message helpers of the route files.
import { t, type Locale } from '../i18n/i18n.js';
import { localeFromAcceptLanguage } from '../web/html.js';
import { wordsFor, type DashboardKey, type Message } from './words.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

const fmt = (isoTime: string) => isoTime.replace('T', ' ').slice(0, 16) + ' UTC';
const fmtSeconds = (isoTime: string) => isoTime.replace('T', ' ').slice(0, 19) + ' UTC';

export function page(reply: FastifyReply, req: FastifyRequest, name: string, data: Record<string, unknown> = {}) {
  const a = reply.server.assets;
  const assets = { pico: a.url('pico.min.css'), css: a.url('dashboard.css'), js: a.url('dashboard.js') };
  const words = wordsFor(localeOf(req));
  return reply.type('text/html; charset=utf-8').viewAsync(name, {
    viewer: req.viewer,
    csrf: reply.generateCsrf(),
    assets,
    fmt,
    fmtSeconds,
    ...words,
    ...data,
  });
}

export const localeOf = (req: FastifyRequest): Locale => localeFromAcceptLanguage(req.headers['accept-language']);

/** A dashboard message in the request's language, as plain text (the view escapes it like any value). */
export const say = (req: FastifyRequest, m: Message): string => t(localeOf(req), `dashboard.${m.key}`, m.vars);

/** Notices by the name a query parameter gives them (`?done=withdrawn`). */
export type Notices = Readonly<Record<string, DashboardKey>>;

/** The notice `name` stands for in `table`, in the request's language; none for any other name. */
export const notice = (req: FastifyRequest, table: Notices, name: unknown): string | undefined =>
  typeof name === 'string' && Object.hasOwn(table, name) ? say(req, { key: table[name]! }) : undefined;

export type Form = Record<string, string | undefined>;

export const field = (req: FastifyRequest, name: string): string => {
  const v = (req.body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};

/** A repeated form field (checkboxes): one value arrives as a string, several as an array. */
export const fields = (req: FastifyRequest, name: string): string[] => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
};

export const query = (req: FastifyRequest): Form => (req.query ?? {}) as Form;
