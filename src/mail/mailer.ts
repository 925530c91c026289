// Sending the mail outbox, as a lease-claim job (jobs/runner.ts). Guarantees:
// - Rows are queued by the caller's transaction (queue.ts), claimed with a lease, sent outside any transaction and
//   recorded only while the claim is held; concurrent senders take disjoint rows, so a message is sent once. A
//   sender that dies mid-send leaves a lease that lapses, and the row is sent again (at least once); the
//   Message-ID is fixed per row, so receivers can drop such a repeat.
// - Failures are retried on the webhook schedule (+1m, +5m, +30m, +2h, +6h, +24h); after the 7th failure, or at once
//   on a permanent SMTP rejection, the row becomes `failed`.
// - Without an SMTP URL, rows become `logged` and the message is printed to the log (smtp.ts).
import { randomBytes } from 'node:crypto';
import { createOutboxSender, type OutboxSender, type OutboxSenderOptions } from '../jobs/outbox-sender.js';
import { fixedDelays } from '../jobs/retry.js';
import { silentLogger } from '../lib/logger.js';
import { WEBHOOK_RETRY_DELAYS_MS } from '../limits.js';
import type { BlobStore } from '../documents/blob-store.js';
import { claimMail, mailLogoOf, recordMail, type MailRow } from './outbox.repo.js';
import { createMailQueue, type MailQueue } from './outbox.js';
import { createTransport, isPermanent, type LogoSource } from './smtp.js';

/** Mail keeps the webhook schedule: one rhythm for operators to know. */
export const MAIL_RETRY_DELAYS_MS = WEBHOOK_RETRY_DELAYS_MS;
export const MAIL_MAX_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1;
const MAIL_SCHEDULE = fixedDelays(MAIL_RETRY_DELAYS_MS);
const DEFAULT_SEND_TIMEOUT_MS = 60_000;
const DEFAULT_LEASE_MS = 120_000;

export type MailerOptions = OutboxSenderOptions & {
  /** `smtp://` or `smtps://` URL; null prints mail to the log instead (embedded default). */
  smtpUrl: string | null;
  /** Envelope and From address with the product's display name, e.g. `Signet <no-reply@example.com>`. */
  from: string;
  /** Where workspace logos are read from, for the inline logo of branded mail; without it, mail goes without. */
  blobs?: BlobStore;
};

export type Mailer = MailQueue &
  Omit<OutboxSender, 'stop'> & {
    readonly mode: 'smtp' | 'log';
    /** Stops the loop, waits for sends in flight, closes SMTP connections. */
    close(): Promise<void>;
  };

export function createMailer(opts: MailerOptions): Mailer {
  const { db, clock } = opts;
  const logger = opts.logger ?? silentLogger;
  const workerId = opts.workerId ?? `mailer:${process.pid}:${randomBytes(4).toString('hex')}`;
  const sendTimeoutMs = opts.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const concurrency = opts.concurrency ?? 4;
  const blobs = opts.blobs;
  const logo: LogoSource | undefined = blobs
    ? async (workspaceId) => {
        const found = await mailLogoOf(db.kysely, workspaceId);
        return found ? { bytes: await blobs.get(found.blob), type: found.type } : null;
      }
    : undefined;
  const transport = createTransport({
    logo,
    smtpUrl: opts.smtpUrl,
    from: opts.from,
    clock,
    logger,
    connections: concurrency,
    sendTimeoutMs,
  });

  const sender = createOutboxSender<MailRow>({
    name: 'mail',
    clock,
    workerId,
    logger,
    leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
    timeoutMs: sendTimeoutMs,
    batchSize: opts.batchSize ?? 50,
    // The log transport writes one line at a time.
    concurrency: transport.mode === 'smtp' ? concurrency : 1,
    pollIntervalMs: opts.pollIntervalMs ?? 1000,
    schedule: MAIL_SCHEDULE,
    claim: (o) => claimMail(db, o),
    record: (row, patch) => recordMail(db, row, workerId, patch as Partial<MailRow>),
    permanent: isPermanent,
    describe: (err) => transport.describe(err),
    logFields: (row) => ({ mailId: row.id, template: row.template, to: row.to_email }),
    async send(row) {
      const messageId = await transport.deliver(row);
      const now = clock.now();
      if (messageId === null) return { status: 'logged', sent_at: now, last_error: null, updated_at: now };
      logger.info({ mailId: row.id, template: row.template, to: row.to_email }, 'mail sent');
      return {
        status: 'sent',
        attempts: row.attempts + 1,
        next_attempt_at: null,
        sent_at: now,
        last_error: null,
        message_id: messageId,
        updated_at: now,
      };
    },
  });

  return {
    mode: transport.mode,
    ...createMailQueue(clock),
    flush: () => sender.flush(),
    start: () => sender.start(),
    wake: () => sender.wake(),
    async close() {
      await sender.stop();
      transport.close();
    },
  };
}
