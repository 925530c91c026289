// A signer's qualified ceremony driven over HTTP, as a browser without JavaScript would follow it: Signet's start
// action, the local provider's login (one-time code) and consent pages, and each redirect back to Signet with the
// ceremony cookie. Tests of failures and security use it; the Chromium test goes through the same pages as a person.
import type { CscProvider } from './csc-provider.js';

export type Step = { url: string; status: number; location: string | null; body: string };

export type Drive = {
  /** Every response, in order. */
  steps: Step[];
  /** The last response (Signet's page, or its redirect to the signing page). */
  last: Step;
  /** The ceremony cookie as the browser held it last. */
  cookie: string | null;
  /** Every ceremony cookie Signet set (name=value), in order. */
  cookies?: string[];
};

export type DriveOptions = {
  /** Signet's origin, e.g. http://127.0.0.1:1234. */
  origin: string;
  token: string;
  provider: CscProvider;
  user?: string;
  body?: unknown;
  /** What the signer answers at each consent page (identify first, then authorize). */
  decisions?: Array<'approve' | 'deny'>;
  /** Stop before following this many callbacks (0: return the first callback URL unvisited). */
  stopAtCallback?: number;
};

const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? '';

export async function driveCeremony(o: DriveOptions): Promise<Drive & { pendingCallback?: string }> {
  const steps: Step[] = [];
  let cookie: string | null = null;
  const cookies: string[] = [];
  const take = async (url: string, init: RequestInit = {}): Promise<Step> => {
    const isSignet = url.startsWith(o.origin);
    const headers = new Headers(init.headers);
    if (isSignet && cookie) headers.set('cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    const set = res.headers.get('set-cookie');
    if (isSignet && set) cookie = /Max-Age=0/.test(set) ? null : set.split(';')[0]!;
    if (isSignet && cookie && cookies.at(-1) !== cookie) cookies.push(cookie);
    const step = { url, status: res.status, location: res.headers.get('location'), body: await res.text() };
    steps.push(step);
    return step;
  };
  const start = await take(`${o.origin}/sign/${o.token}/qes/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(o.body ?? { signature: { type: 'typed', text: 'Signer' } }),
  });
  if (start.status !== 200) return { steps, last: start, cookie };
  let next = (JSON.parse(start.body) as { redirect_url: string }).redirect_url;
  const decisions = o.decisions ?? ['approve', 'approve'];
  for (let round = 0; round < 2; round++) {
    const login = await take(next);
    if (login.status !== 200) return { steps, last: login, cookie };
    const consent = await take(`${o.provider.url}/oauth2/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ flow: hidden(login.body, 'flow'), otp: o.provider.loginCode(o.user) }).toString(),
    });
    if (consent.status !== 200 && !consent.location) return { steps, last: consent, cookie };
    const back = consent.location
      ? consent
      : await take(`${o.provider.url}/oauth2/consent`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            flow: hidden(consent.body, 'flow'),
            decision: decisions[round] ?? 'approve',
          }).toString(),
        });
    if (!back.location) return { steps, last: back, cookie };
    if (o.stopAtCallback === round) return { steps, last: back, cookie, pendingCallback: back.location };
    const answer = await take(back.location);
    if (answer.status !== 303 || !answer.location?.startsWith(o.provider.url))
      return { steps, last: answer, cookie, cookies };
    next = answer.location;
  }
  return { steps, last: steps.at(-1)!, cookie, cookies };
}
