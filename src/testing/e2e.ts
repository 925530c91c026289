// End-to-end fixtures: the real app with a real SMTP peer and a real webhook receiver whose deliveries are verified
// with Stripe's verifier (an implementation no one here wrote) and checked against their event's schema, strictly:
// a body with a field more or less is refused, and the fixture's next `work()` or `eventsOf()` throws naming it.
// Links are taken from the e-mails, as a signer would.
import http from 'node:http';
import Stripe from 'stripe';
import { setRateLimit } from '../keys/keys.repo.js';
import { startHarness, type Harness, type HarnessOptions } from './harness.js';
import { startSmtpPeer, type SmtpPeer } from '../mail/testing/smtp-peer.js';
import { eventBodyProblems } from './schemas.js';

export type ReceivedEvent = {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  event: Record<string, any>;
};

export type Receiver = {
  url(path: string): string;
  events: ReceivedEvent[];
  /** Signed deliveries whose body did not fit its event's schema (refused with 400). */
  misfits: { path: string; body: string; problems: string[] }[];
  secrets: Map<string, string>;
  close(): Promise<void>;
};

const stripe = new Stripe('sk_test_unused');

/** A webhook receiver; each path is one hook whose secret must be registered in `secrets` before delivery. */
export async function startReceiver(): Promise<Receiver> {
  const events: ReceivedEvent[] = [];
  const misfits: Receiver['misfits'] = [];
  const secrets = new Map<string, string>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const secret = secrets.get(path);
      try {
        if (!secret) throw new Error(`no secret for ${path}`);
        const event = stripe.webhooks.constructEvent(
          body,
          req.headers['x-service-signature'] as string,
          secret,
          1e9,
        ) as unknown as Record<string, any>;
        const problems = eventBodyProblems(body);
        if (problems.length > 0) {
          misfits.push({ path, body, problems });
          throw new Error(problems.join('; '));
        }
        events.push({ path, headers: req.headers, body, event });
        res.writeHead(200).end('ok');
      } catch (err) {
        res.writeHead(400).end((err as Error).message);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    events,
    misfits,
    secrets,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export type E2E = {
  h: Harness;
  smtp: SmtpPeer;
  rx: Receiver;
  token: string;
  workspaceId: string;
  /** Runs background work (mail, sealing, deliveries) to quiescence. */
  work(): Promise<void>;
  /** The newest signer link mailed to `email`. */
  linkFor(email: string): Promise<string>;
  /** Every signer link mailed to `email`, oldest first. */
  linksFor(email: string): Promise<string[]>;
  eventsOf(name: string, documentId?: string, path?: string): Record<string, any>[];
  api(method: string, path: string, body?: unknown): ReturnType<Harness['request']>;
  close(): Promise<void>;
};

export async function startE2E(opts: HarnessOptions & { tier?: string } = {}): Promise<E2E> {
  const smtp = await startSmtpPeer();
  const rx = await startReceiver();
  const h = await startHarness({ start: Date.now(), ...opts, env: { SMTP_URL: smtp.url, ...opts.env } });
  const t = await h.tenant(opts.tier ?? 'business');
  await setRateLimit(h.db.kysely, t.keyId, 100_000);
  const hook = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url: rx.url('/ws') } });
  if (hook.status !== 201) throw new Error(`hook creation failed: ${hook.text}`);
  rx.secrets.set('/ws', hook.json.secret);

  const linksFor = async (email: string) => {
    const mails = await smtp.parsed();
    return mails
      .filter((m) => (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === email)))
      .map((m) => /\/sign\/([A-Za-z0-9_-]{43})/.exec(m.text ?? '')?.[1])
      .filter((x): x is string => Boolean(x));
  };
  const assertFits = () => {
    if (rx.misfits.length === 0) return;
    const m = rx.misfits[0]!;
    throw new Error(
      `${rx.misfits.length} webhook bodies do not fit their schema; first: ${m.problems.join('; ')}\n${m.body}`,
    );
  };
  return {
    h,
    smtp,
    rx,
    token: t.token,
    workspaceId: t.workspaceId,
    async work() {
      await h.work();
      assertFits();
    },
    linksFor,
    async linkFor(email) {
      const all = await linksFor(email);
      if (all.length === 0) throw new Error(`no signer link mailed to ${email}`);
      return all[all.length - 1]!;
    },
    eventsOf(name, documentId, path = '/ws') {
      assertFits();
      return rx.events
        .filter((e) => e.path === path && e.event.event === name && (!documentId || e.event.document_id === documentId))
        .map((e) => e.event);
    },
    api: (method, path, body) => h.request(method, path, { token: t.token, body }),
    async close() {
      await h.close();
      await smtp.close();
      await rx.close();
    },
  };
}

export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
