// A cookie-keeping HTTP client for dashboard tests over the real server: it follows no redirect by itself (tests
// assert them), posts forms as a browser does, and reads the CSRF token from the last page it got.
import type { Harness, Res } from '../../testing/harness.js';
import { createUserLink } from '../people.service.js';
import { hashPassword } from '../passwords.js';
import { setPasswordHash, type Role } from '../people.repo.js';

export type DashboardClient = {
  get(path: string): Promise<Res>;
  /** Posts a form with the CSRF token of the last page (or `csrf: null` for none). */
  post(path: string, fields?: Record<string, string>, o?: { csrf?: string | null }): Promise<Res>;
  /** Posts a multipart form (fields, then files) with the CSRF token of the last page, as a browser does. */
  postMultipart(
    path: string,
    fields?: Record<string, string>,
    files?: Record<string, { name: string; content: string | Uint8Array; type?: string }>,
    o?: { csrf?: string | null },
  ): Promise<Res>;
  /** The CSRF token of the last HTML page. */
  csrf(): string | undefined;
  cookies: Map<string, string>;
};

/** `acceptLanguage`: the Accept-Language header the client sends (none by default, so pages are English). */
export function dashboardClient(
  h: Harness,
  o: { localAddress?: string; acceptLanguage?: string } = {},
): DashboardClient {
  const cookies = new Map<string, string>();
  let lastCsrf: string | undefined;
  const remember = (res: Res) => {
    for (const line of String(res.headers['set-cookie'] ?? '').split(/,(?=\s*[A-Za-z0-9_-]+=)/)) {
      const m = /^\s*([^=;\s]+)=([^;]*)/.exec(line);
      if (!m) continue;
      if (m[2] === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(m[1]!);
      else cookies.set(m[1]!, m[2]!);
    }
    const t = /name="_csrf" value="([^"]+)"/.exec(res.text);
    if (t) lastCsrf = t[1];
    return res;
  };
  const headers = () => ({
    accept: 'text/html',
    ...(o.acceptLanguage ? { 'accept-language': o.acceptLanguage } : {}),
    ...(cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
  });
  return {
    cookies,
    csrf: () => lastCsrf,
    get: async (path) => remember(await h.request('GET', path, { headers: headers(), localAddress: o.localAddress })),
    async post(path, fields = {}, opt = {}) {
      const token = opt.csrf === undefined ? lastCsrf : opt.csrf;
      const form = new URLSearchParams({ ...fields, ...(token ? { _csrf: token } : {}) }).toString();
      return remember(
        await h.request('POST', path, {
          rawBody: form,
          headers: { ...headers(), 'content-type': 'application/x-www-form-urlencoded' },
          localAddress: o.localAddress,
        }),
      );
    },
    async postMultipart(path, fields = {}, files = {}, opt = {}) {
      const token = opt.csrf === undefined ? lastCsrf : opt.csrf;
      const boundary = `----signet${Math.random().toString(36).slice(2)}`;
      const parts: Buffer[] = [];
      const head = (name: string, extra = '') =>
        `--${boundary}\r\ncontent-disposition: form-data; name="${name}"${extra}\r\n`;
      for (const [name, value] of Object.entries({ ...(token ? { _csrf: token } : {}), ...fields }))
        parts.push(Buffer.from(`${head(name)}\r\n${value}\r\n`));
      for (const [name, f] of Object.entries(files))
        parts.push(
          Buffer.from(`${head(name, `; filename="${f.name}"`)}content-type: ${f.type ?? 'text/csv'}\r\n\r\n`),
          Buffer.from(f.content),
          Buffer.from('\r\n'),
        );
      parts.push(Buffer.from(`--${boundary}--\r\n`));
      return remember(
        await h.request('POST', path, {
          rawBody: Buffer.concat(parts),
          headers: { ...headers(), 'content-type': `multipart/form-data; boundary=${boundary}` },
          localAddress: o.localAddress,
        }),
      );
    },
  };
}

export const PASSWORD = 'correct horse battery staple';

const CHEAP = { N: 1024, r: 8, p: 1 };
let cheapHash: Promise<string> | undefined;

/** A person with a password in `workspaceId`, signed in on a fresh client. */
export async function signedIn(
  h: Harness,
  workspaceId: string,
  role: Role = 'owner',
  email = `${role}.${Math.random().toString(36).slice(2, 8)}@example.com`,
  o: { acceptLanguage?: string } = {},
) {
  const link = await createUserLink(h, {
    email,
    workspaceId,
    role,
    by: 'test',
  });
  const c = dashboardClient(h, o);
  const path = new URL(link.url).pathname;
  await c.get(path);
  const set = await c.post(path, { password: PASSWORD, confirm: PASSWORD });
  if (set.status !== 303) throw new Error(`set-password: ${set.status}`);
  // The same password under a hash as cheap as an old one's (sign-in reads scrypt's cost from the stored hash): a
  // sign-in then takes about 1 ms of CPU instead of 0.2 s, which a run's hundreds of sign-ins add up to.
  await setPasswordHash(h.db.kysely, link.userId, await (cheapHash ??= hashPassword(PASSWORD, CHEAP)), h.clock.now());
  await c.get('/dashboard/sign-in');
  const r = await c.post('/dashboard/sign-in', { email, password: PASSWORD });
  if (r.status !== 303) throw new Error(`sign-in: ${r.status}`);
  return { client: c, email };
}
