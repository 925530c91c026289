// Who may use which dashboard route: one table, enforced once by dashboard.routes.ts's preHandler. Guarantees:
// - Every route the dashboard registers has exactly one entry here (roles.test.ts walks app.routeList); a route
//   missing from the table is refused to everyone (403, logged), never served by default.
// - Roles are ranked public < member < admin < owner; each entry is the least role that may use the route, and a
//   higher role may use everything a lower one may. Members read, send and use templates; admins also manage keys,
//   hooks, settings, documents (withdraw, remind) and templates; owners also manage people.
// - The services keep their own checks (canManage, requireManager, the owner check of inviteMember) as a second line;
//   they use `allows` too, so the ranking is defined here only.
import type { Role } from './people.repo.js';
import type { DashboardKey } from './words.js';

/** The least role a route needs; `public` needs no sign-in. */
export type Need = 'public' | Role;

const RANK: Readonly<Record<Need, number>> = { public: 0, member: 1, admin: 2, owner: 3 };

/** `METHOD /dashboard/…` exactly as Fastify registers it (HEAD twins of GET routes follow their GET). */
export const ROUTE_ROLES = {
  // Signing in and setting a password come before any session.
  'GET /dashboard/sign-in': 'public',
  'POST /dashboard/sign-in': 'public',
  'GET /dashboard/set-password/:token': 'public',
  'POST /dashboard/set-password/:token': 'public',

  // Everyone signed in: their own account, and reading the workspace.
  'GET /dashboard': 'member',
  'POST /dashboard/sign-out': 'member',
  'GET /dashboard/account': 'member',
  'POST /dashboard/account/password': 'member',
  'GET /dashboard/overview': 'member',
  'GET /dashboard/developers/keys': 'member',
  'GET /dashboard/developers/keys/:id': 'member',
  'GET /dashboard/developers/webhooks': 'member',
  'GET /dashboard/developers/webhooks/:id': 'member',
  'GET /dashboard/documents': 'member',
  'GET /dashboard/documents/:id': 'member',
  'GET /dashboard/documents/:id/signed.pdf': 'member',
  'GET /dashboard/documents/:id/audit-certificate.pdf': 'member',
  'GET /dashboard/people': 'member',
  'GET /dashboard/settings': 'member',
  'GET /dashboard/audit-log': 'member',
  // Using templates: view, instantiate, and confirm or discard the workspace's staged instances.
  'GET /dashboard/templates': 'member',
  'GET /dashboard/templates/:id': 'member',
  'GET /dashboard/templates/:id/versions/:n': 'member',
  'GET /dashboard/templates/:id/use': 'member',
  'POST /dashboard/templates/:id/use': 'member',
  'GET /dashboard/reviews': 'member',
  'POST /dashboard/reviews/:id/confirm': 'member',
  'POST /dashboard/reviews/:id/discard': 'member',

  // Sending a document (members send): the upload form and drafts, a draft's editor, its PDF, save, send, delete.
  'GET /dashboard/send': 'member',
  'POST /dashboard/send': 'member',
  'GET /dashboard/send/:draft': 'member',
  'GET /dashboard/send/:draft/document.pdf': 'member',
  'POST /dashboard/send/:draft': 'member',
  'POST /dashboard/send/:draft/send': 'member',
  'POST /dashboard/send/:draft/delete': 'member',
  // Members send: a template to many (bulk send), and watch the send.
  'GET /dashboard/templates/:id/bulk': 'member',
  'GET /dashboard/templates/:id/bulk/example.csv': 'member',
  'POST /dashboard/templates/:id/bulk/dry-run': 'member',
  'POST /dashboard/templates/:id/bulk': 'member',
  'GET /dashboard/bulk-sends/:id': 'member',

  // Managing keys, hooks, settings and documents (a confirmation page is part of the action it confirms).
  'POST /dashboard/developers/keys': 'admin',
  'POST /dashboard/developers/keys/:id/ips': 'admin',
  'POST /dashboard/developers/keys/:id/origins': 'admin',
  'GET /dashboard/developers/keys/:id/revoke': 'admin',
  'POST /dashboard/developers/keys/:id/revoke': 'admin',
  'POST /dashboard/developers/webhooks': 'admin',
  'POST /dashboard/developers/webhooks/:id/test': 'admin',
  'GET /dashboard/developers/webhooks/:id/delete': 'admin',
  'POST /dashboard/developers/webhooks/:id/delete': 'admin',
  'POST /dashboard/developers/webhooks/:id/deliveries/:delivery/replay': 'admin',
  'GET /dashboard/documents/:id/withdraw': 'admin',
  'POST /dashboard/documents/:id/withdraw': 'admin',
  'GET /dashboard/documents/:id/purge': 'admin',
  'POST /dashboard/documents/:id/purge': 'admin',
  'POST /dashboard/settings/retention': 'admin',
  'POST /dashboard/documents/:id/requests/:request/remind': 'admin',
  'POST /dashboard/settings/reminders': 'admin',
  'POST /dashboard/settings/workspace': 'admin',
  'POST /dashboard/settings/logo': 'admin',
  'POST /dashboard/settings/logo/remove': 'admin',
  'POST /dashboard/settings/language': 'admin',
  // Managing templates: create, publish a version, archive.
  'GET /dashboard/templates/new': 'admin',
  'POST /dashboard/templates/new': 'admin',
  'GET /dashboard/templates/:id/publish': 'admin',
  // The PDFs the create and publish pages' visual editor draws (a kept upload; a version's original).
  'GET /dashboard/templates/uploads/:upload/document.pdf': 'admin',
  'GET /dashboard/templates/:id/versions/:n/document.pdf': 'admin',
  'POST /dashboard/templates/:id/publish': 'admin',
  'GET /dashboard/templates/:id/archive': 'admin',
  'POST /dashboard/templates/:id/archive': 'admin',

  // Managing people.
  'POST /dashboard/people': 'owner',
} as const satisfies Record<string, Need>;

export type DashboardRoute = keyof typeof ROUTE_ROLES;

/** true: someone with `role` (a signed-out visitor is `public`) may use what needs `need`. */
export const allows = (role: Need, need: Need): boolean => RANK[role] >= RANK[need];

/** What a refused signed-in person is told, by what the route needed. */
export const REFUSAL: Readonly<Record<Exclude<Need, 'public' | 'member'>, DashboardKey>> = {
  admin: 'error.managersOnly',
  owner: 'error.ownersOnlyAny',
};

/** The table's key for a route: HEAD as its GET, and `/dashboard/` as `/dashboard`. */
export const routeKey = (method: string, url: string): string =>
  `${method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase()} ${url.length > 1 ? url.replace(/\/$/, '') : url}`;

/** The route's entry, or undefined when the table has none. */
export function needOf(method: string, url: string): Need | undefined {
  const key = routeKey(method, url);
  return Object.hasOwn(ROUTE_ROLES, key) ? ROUTE_ROLES[key as DashboardRoute] : undefined;
}

/** true: `role` may use `route` (for a page deciding whether to offer a form that posts there). */
export const mayUse = (role: Need, route: DashboardRoute): boolean => allows(role, ROUTE_ROLES[route]);

export type Verdict =
  | { pass: true }
  | { pass: false; signIn: true }
  | { pass: false; signIn: false; reason: DashboardKey; unlisted: boolean };

/**
 * The gate's answer for a request. `url` is the route as registered (undefined for the not-found handler, which
 * any signed-in person may reach); `role` is the viewer's, or null when nobody is signed in.
 */
export function verdict(method: string, url: string | undefined, role: Role | null): Verdict {
  const need = url === undefined ? 'member' : needOf(method, url);
  if (need === undefined) return { pass: false, signIn: false, reason: 'error.noRule', unlisted: true };
  if (need === 'public') return { pass: true };
  if (role === null) return { pass: false, signIn: true };
  if (need === 'member' || allows(role, need)) return { pass: true };
  return { pass: false, signIn: false, reason: REFUSAL[need], unlisted: false };
}
