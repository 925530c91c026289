// What every dashboard page gets: the signed-in person, a fresh CSRF token, the versioned asset URLs and the date
// formatters; and the form-reading helpers of the route files.
import type { FastifyReply, FastifyRequest } from 'fastify';

const fmt = (isoTime: string) => isoTime.replace('T', ' ').slice(0, 16) + ' UTC';
const fmtSeconds = (isoTime: string) => isoTime.replace('T', ' ').slice(0, 19) + ' UTC';

export function page(reply: FastifyReply, req: FastifyRequest, name: string, data: Record<string, unknown> = {}) {
  const a = reply.server.assets;
  const assets = { pico: a.url('pico.min.css'), css: a.url('dashboard.css'), js: a.url('dashboard.js') };
  return reply
    .type('text/html; charset=utf-8')
    .viewAsync(name, { viewer: req.viewer, csrf: reply.generateCsrf(), assets, fmt, fmtSeconds, ...data });
}

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
