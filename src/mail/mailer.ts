// Outgoing mail through a transactional outbox. Guarantees:
// - A message is rendered and written to `mail_outbox` by `enqueue(trx, …)` inside the caller's transaction, so it
//   exists exactly when the state change that caused it committed. Nothing goes on the wire before that.
// - `flush()` claims due rows with a lease (SKIP LOCKED on PostgreSQL), sends each through SMTP outside any
//   transaction, and records the outcome only while it still holds the claim. Concurrent flushers take disjoint
//   rows, so a message is sent once; a flusher that dies mid-send leaves a lease that lapses, and the row is sent
//   again (at least once). The Message-ID is fixed per row, so receivers can drop such a repeat.
// - Failures are retried with backoff (+1m, +5m, +30m, +2h, +6h, +24h); after the 7th failure, or at once on a
//   permanent SMTP rejection (5xx for the envelope or message), the row becomes `failed`.
// - Without an SMTP URL, rows become `logged` and the message is printed to the log (see `logOnly`).
import nodemailer, { type Transporter } from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { Kysely, Selectable } from 'kysely';
import { randomBytes } from 'node:crypto';
import { skipLocked, type Db } from '../db/db.js';
import type { Database, MailOutboxTable } from '../db/schema.js';
import { iso, type Clock } from '../lib/clock.js';
import { isKnownLocale, type Locale } from './locales.js';
import { isTemplateName, oneLine, renderMail, type TemplateName, type TemplateVars } from './templates.js';

export type MailStatus = 'queued' | 'sent' | 'failed' | 'logged';

export type MailLogger = {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
  error(o: object, m?: string): void;
};

/** Template and its variables; the workspace name is filled in from the workspace row. */
export type MailContent = {
  [N in TemplateName]: { template: N; vars: Omit<TemplateVars[N], 'workspaceName'> };
}[TemplateName];

export type OutgoingMail = MailContent & {
  workspaceId: string;
  to: { email: string; name: string };
  /** Reply-To address; omitted means the workspace's reply_to, null means none. */
  replyTo?: string | null;
  locale: Locale;
  documentId?: string | null;
  signingRequestId?: string | null;
};

export type MailerOptions = {
  db: Db;
  clock: Clock;
  /** `smtp://` or `smtps://` URL; null prints mail to the log instead (embedded default). */
  smtpUrl: string | null;
  /** Envelope and From address with the product's display name, e.g. `Signet <no-reply@example.com>`. */
  from: string;
  logger?: MailLogger;
  /** Owner of claims; unique per process. */
  workerId?: string;
  leaseMs?: number;
  /** Upper bound on one SMTP send; must be shorter than the lease. */
  sendTimeoutMs?: number;
  batchSize?: number;
  /** Parallel SMTP sends (and pooled connections). */
  concurrency?: number;
};

export type Mailer = {
  readonly mode: 'smtp' | 'log';
  /** Renders and queues a message in the caller's transaction (or on the plain Kysely instance). */
  enqueue(trx: Kysely<Database>, msg: OutgoingMail): Promise<{ id: string; status: 'queued' }>;
  /** Outside a transaction: queue, then deliver this one message now. Resolves with its status afterwards. */
  send(msg: OutgoingMail): Promise<{ id: string; status: MailStatus }>;
  /** Delivers every due queued row; resolves with how many were sent (or logged). */
  flush(): Promise<number>;
  /** Background loop: flush, then an unref'd sleep of pollIntervalMs when nothing was due. */
  start(pollIntervalMs?: number): void;
  /** Ends the loop's sleep now (new mail was committed). */
  wake(): void;
  /** Stops the loop, waits for sends in flight, closes SMTP connections. */
  close(): Promise<void>;
};

const MIN = 60_000;
export const MAIL_RETRY_DELAYS_MS = [1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 360 * MIN, 1440 * MIN] as const;
export const MAIL_MAX_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1;
const DEFAULT_SEND_TIMEOUT_MS = 60_000;
const DEFAULT_LEASE_MS = 120_000;
const LEASE_MARGIN_MS = 1_000;
const ERROR_LIMIT = 500;

/** When attempt n+1 is due after `attemptsMade` failures, or null to give up. */
export function nextMailAttemptAt(attemptsMade: number, failedAt: number): number | null {
  const delay = MAIL_RETRY_DELAYS_MS[attemptsMade - 1];
  return delay === undefined ? null : failedAt + delay;
}

const silent: MailLogger = { info() {}, warn() {}, error() {} };
// One address, no display name, nothing that could split a header.
const ADDRESS = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+$/;
const newMailId = () => `mail_${randomBytes(12).toString('hex')}`;

type Row = Selectable<MailOutboxTable>;
class SendTimeout extends Error {}

export function createMailer(opts: MailerOptions): Mailer {
  const { db, clock } = opts;
  const logger = opts.logger ?? silent;
  const workerId = opts.workerId ?? `mailer:${process.pid}:${randomBytes(4).toString('hex')}`;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const sendTimeoutMs = opts.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const batchSize = opts.batchSize ?? 50;
  const concurrency = opts.concurrency ?? 4;
  if (leaseMs < sendTimeoutMs + LEASE_MARGIN_MS) {
    throw new Error(`leaseMs (${leaseMs}) must exceed sendTimeoutMs (${sendTimeoutMs}) by at least ${LEASE_MARGIN_MS} ms`);
  }

  const parsedFrom = addressparser(opts.from, { flatten: true });
  if (parsedFrom.length !== 1 || !ADDRESS.test(parsedFrom[0]!.address)) {
    throw new Error(`mail from must be one address like "Signet <no-reply@example.com>", got "${opts.from}"`);
  }
  const fromAddress = parsedFrom[0]!.address;
  const brand = oneLine(parsedFrom[0]!.name) || 'Signet';
  const fromDomain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1);

  let secret: string | undefined;
  let transport: Transporter | null = null;
  if (opts.smtpUrl) {
    const u = new URL(opts.smtpUrl);
    if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new Error('smtpUrl must use smtp: or smtps:');
    secret = u.password ? decodeURIComponent(u.password) : undefined;
    transport = nodemailer.createTransport({
      ...parseConnectionUrl(opts.smtpUrl),
      pool: true,
      maxConnections: concurrency,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }
  const mode = transport ? 'smtp' : 'log';
  let closing = false;

  // Error text for the row and the log: bounded, no NULs (PostgreSQL text), never the SMTP password.
  const describe = (err: unknown): string => {
    const e = err as { code?: string; message?: string };
    let msg = e?.message ? (e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message) : String(err);
    if (secret) msg = msg.split(secret).join('***');
    return msg.replace(/\u0000/g, '').slice(0, ERROR_LIMIT);
  };

  async function enqueue(trx: Kysely<Database>, msg: OutgoingMail): Promise<{ id: string; status: 'queued' }> {
    if (!isKnownLocale(msg.locale)) throw new Error(`unknown locale "${String(msg.locale)}"`);
    if (!isTemplateName(msg.template)) throw new Error(`unknown mail template "${String(msg.template)}"`);
    const toEmail = msg.to.email.trim();
    if (!ADDRESS.test(toEmail)) throw new Error(`not a plain e-mail address: "${msg.to.email}"`);
    const ws = await trx
      .selectFrom('workspaces')
      .select(['name', 'reply_to'])
      .where('id', '=', msg.workspaceId)
      .executeTakeFirst();
    if (!ws) throw new Error(`no workspace ${msg.workspaceId}`);
    const replyTo = msg.replyTo === undefined ? ws.reply_to : msg.replyTo;
    if (replyTo != null && !ADDRESS.test(replyTo)) throw new Error(`reply-to is not a plain e-mail address: "${replyTo}"`);
    const rendered = renderMail(msg.template, msg.locale, { ...msg.vars, workspaceName: ws.name } as never);
    const now = clock.now();
    const id = newMailId();
    await trx
      .insertInto('mail_outbox')
      .values({
        id,
        workspace_id: msg.workspaceId,
        document_id: msg.documentId ?? null,
        signing_request_id: msg.signingRequestId ?? null,
        template: msg.template,
        locale: msg.locale,
        to_email: toEmail,
        to_name: oneLine(msg.to.name),
        from_name: oneLine(ws.name),
        reply_to: replyTo ?? null,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        status: 'queued',
        attempts: 0,
        next_attempt_at: now,
        claimed_by: null,
        claim_expires_at: null,
        last_error: null,
        message_id: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      })
      .execute();
    return { id, status: 'queued' };
  }

  async function claim(limit: number, onlyId?: string): Promise<Row[]> {
    const now = clock.now();
    let due = db.kysely
      .selectFrom('mail_outbox')
      .select('id')
      .where('status', '=', 'queued')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<=', now)]));
    if (onlyId !== undefined) due = due.where('id', '=', onlyId);
    // One statement: SKIP LOCKED keeps concurrent PostgreSQL claimers on disjoint rows; SQLite has one writer.
    return db.kysely
      .updateTable('mail_outbox')
      .set({ claimed_by: workerId, claim_expires_at: now + leaseMs })
      .where('id', 'in', skipLocked(db, due.orderBy('next_attempt_at').limit(limit)))
      .returningAll()
      .execute();
  }

  // Applies an outcome only while this worker holds the claim it worked under.
  async function record(row: Row, set: Partial<Row>): Promise<boolean> {
    const res = await db.kysely
      .updateTable('mail_outbox')
      .set({ ...set, claimed_by: null, claim_expires_at: null, updated_at: clock.now() })
      .where('id', '=', row.id)
      .where('claimed_by', '=', workerId)
      .where('attempts', '=', row.attempts)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  // Deliberate dev-mode exception: with no SMTP configured, the log is the only way a developer on the embedded
  // default can reach a signer link, so the text body (and the links in it) is logged. With SMTP set, no log line
  // ever carries a body or a link: they hold signer tokens.
  async function logOnly(row: Row): Promise<boolean> {
    const links = row.text.match(/https?:\/\/\S+/g) ?? [];
    logger.info(
      { mailId: row.id, template: row.template, to: row.to_email, subject: row.subject, links, text: row.text },
      'mail not sent: no SMTP_URL configured, logged instead',
    );
    const now = clock.now();
    return record(row, { status: 'logged', sent_at: now, last_error: null });
  }

  async function viaSmtp(row: Row): Promise<boolean> {
    const messageId = `<${row.id}@${fromDomain}>`;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        transport!.sendMail({
          from: { name: `${row.from_name} via ${brand}`, address: fromAddress },
          to: { name: row.to_name, address: row.to_email },
          ...(row.reply_to ? { replyTo: row.reply_to } : {}),
          subject: row.subject,
          text: row.text,
          html: row.html,
          messageId,
          date: new Date(clock.now()),
          headers: { 'Auto-Submitted': 'auto-generated', 'Content-Language': row.locale },
        }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new SendTimeout(`no SMTP answer within ${sendTimeoutMs} ms`)), sendTimeoutMs);
        }),
      ]);
    } catch (err) {
      const made = row.attempts + 1;
      const now = clock.now();
      const next = isPermanent(err) ? null : nextMailAttemptAt(made, now);
      const error = describe(err);
      logger.warn(
        { mailId: row.id, template: row.template, to: row.to_email, attempt: made, error },
        next === null ? 'mail delivery giving up' : 'mail delivery failed, will retry',
      );
      await record(row, {
        status: next === null ? 'failed' : 'queued',
        attempts: made,
        next_attempt_at: next,
        last_error: error,
      });
      return false;
    } finally {
      clearTimeout(timer);
    }
    logger.info({ mailId: row.id, template: row.template, to: row.to_email }, 'mail sent');
    return record(row, {
      status: 'sent',
      attempts: row.attempts + 1,
      next_attempt_at: null,
      sent_at: clock.now(),
      last_error: null,
      message_id: messageId,
    });
  }

  async function deliver(batch: Row[]): Promise<number> {
    let next = 0;
    let done = 0;
    const lane = async () => {
      while (next < batch.length) {
        const row = batch[next++]!;
        try {
          if (transport && (closing || clock.now() + sendTimeoutMs + LEASE_MARGIN_MS > row.claim_expires_at!)) {
            // Shutting down, or the lease could lapse mid-send: hand the row back untouched.
            await record(row, {});
          } else if (await (transport ? viaSmtp(row) : logOnly(row))) {
            done++;
          }
        } catch (err) {
          // Recording failed; the lease lapses and the row is claimed again.
          logger.error({ mailId: row.id, err: describe(err) }, 'recording mail outcome failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(transport ? concurrency : 1, batch.length) }, lane));
    return done;
  }

  const runs = new Set<Promise<unknown>>();
  function track<T>(p: Promise<T>): Promise<T> {
    runs.add(p);
    void p.then(
      () => runs.delete(p),
      () => runs.delete(p),
    );
    return p;
  }

  async function drain(): Promise<number> {
    let total = 0;
    while (!closing) {
      const batch = await claim(batchSize);
      if (batch.length === 0) break;
      total += await deliver(batch);
    }
    return total;
  }

  let loop: Promise<void> | undefined;
  let woken = false;
  let interrupt: (() => void) | undefined;

  return {
    mode,
    enqueue,
    async send(msg) {
      const { id } = await enqueue(db.kysely, msg);
      if (!closing) await track(claim(1, id).then(deliver));
      const row = await db.kysely.selectFrom('mail_outbox').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      return { id, status: row.status as MailStatus };
    },
    flush() {
      return closing ? Promise.resolve(0) : track(drain());
    },
    start(pollIntervalMs = 1000) {
      if (loop || closing) return;
      loop = (async () => {
        while (!closing) {
          woken = false;
          let n = 0;
          try {
            n = await track(drain());
          } catch (err) {
            logger.error({ err: describe(err) }, 'mail flush failed');
          }
          if (closing || n > 0 || woken) continue;
          await new Promise<void>((resolve) => {
            const t = setTimeout(done, pollIntervalMs);
            t.unref();
            function done() {
              clearTimeout(t);
              interrupt = undefined;
              resolve();
            }
            interrupt = done;
          });
        }
      })();
    },
    wake() {
      woken = true;
      interrupt?.();
    },
    async close() {
      closing = true;
      interrupt?.();
      await loop;
      await Promise.allSettled([...runs]);
      transport?.close();
    },
  };
}

function isPermanent(err: unknown): boolean {
  const e = err as { code?: string; responseCode?: number; command?: string };
  if (e?.code !== 'EENVELOPE' && e?.code !== 'EMESSAGE') return false;
  // A 5xx answer to the envelope or the message, or an address nodemailer refused before sending.
  return (typeof e.responseCode === 'number' && e.responseCode >= 500) || e.command === 'API';
}

export type MailView = {
  id: string;
  workspace_id: string;
  document_id: string | null;
  signing_request_id: string | null;
  template: string;
  locale: string;
  to_email: string;
  to_name: string;
  reply_to: string | null;
  subject: string;
  /** Bodies hold signer links: show them to operators only. */
  text: string;
  html: string;
  status: MailStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  message_id: string | null;
  created_at: string;
  sent_at: string | null;
};

const toView = (r: Row): MailView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  document_id: r.document_id,
  signing_request_id: r.signing_request_id,
  template: r.template,
  locale: r.locale,
  to_email: r.to_email,
  to_name: r.to_name,
  reply_to: r.reply_to,
  subject: r.subject,
  text: r.text,
  html: r.html,
  status: r.status as MailStatus,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
  last_error: r.last_error,
  message_id: r.message_id,
  created_at: iso(r.created_at),
  sent_at: r.sent_at === null ? null : iso(r.sent_at),
});

/** Newest first (limit 50 by default, at most 500). `to` matches the address case-insensitively. */
export async function listOutbox(
  db: Db,
  opts: {
    documentId?: string;
    signingRequestId?: string;
    workspaceId?: string;
    to?: string;
    status?: MailStatus;
    limit?: number;
  } = {},
): Promise<MailView[]> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  let q = db.kysely.selectFrom('mail_outbox').selectAll();
  if (opts.documentId !== undefined) q = q.where('document_id', '=', opts.documentId);
  if (opts.signingRequestId !== undefined) q = q.where('signing_request_id', '=', opts.signingRequestId);
  if (opts.workspaceId !== undefined) q = q.where('workspace_id', '=', opts.workspaceId);
  if (opts.status !== undefined) q = q.where('status', '=', opts.status);
  if (opts.to !== undefined) q = q.where((eb) => eb(eb.fn('lower', ['to_email']), '=', opts.to!.trim().toLowerCase()));
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toView);
}

export async function getMail(db: Db, id: string): Promise<MailView | undefined> {
  const row = await db.kysely.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toView(row) : undefined;
}
