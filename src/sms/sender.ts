// Sending the SMS outbox, as a lease-claim job (jobs/runner.ts). Guarantees:
// - Rows are queued by the caller's transaction (outbox.ts), claimed with a lease, sent outside any transaction and
//   recorded only while the claim is held; concurrent senders take disjoint rows, so a message is sent once. A
//   sender that dies mid-send leaves a lease that lapses, and the row is sent again (at least once).
// - A retryable failure (429, 5xx, no answer) is retried on the webhook schedule (+1m, +5m, +30m, +2h, +6h, +24h);
//   after the 7th failure, or at once on a non-retryable one (another 4xx, a 2xx without a SID), the row is `failed`.
// - Without a transport (no SMS_URL: the embedded default), rows become `logged` and the number and text are written
//   to the log at info: the only way to reach an SMS signer there. With a transport, no log line carries a body.
//   The sender never sees the provider's credentials, so no log line or stored error can carry them.
import { randomBytes } from 'node:crypto';
import { createOutboxSender, type OutboxSender, type OutboxSenderOptions } from '../jobs/outbox-sender.js';
import { fixedDelays } from '../jobs/retry.js';
import { describeError, silentLogger } from '../lib/logger.js';
import { WEBHOOK_RETRY_DELAYS_MS } from '../limits.js';
import { claimSms, recordSms, type SmsRow } from './outbox.repo.js';
import { createSmsQueue, type SmsQueue } from './outbox.js';
import { SmsSendError, type SmsTransport } from './transport.js';

/** SMS keeps the webhook schedule: one rhythm for operators to know. */
export const SMS_RETRY_DELAYS_MS = WEBHOOK_RETRY_DELAYS_MS;
export const SMS_MAX_ATTEMPTS = SMS_RETRY_DELAYS_MS.length + 1;
const SMS_SCHEDULE = fixedDelays(SMS_RETRY_DELAYS_MS);
/** Above the Twilio transport's own 15 s request timeout. */
const DEFAULT_SEND_TIMEOUT_MS = 20_000;
const DEFAULT_LEASE_MS = 60_000;

export type SmsSenderOptions = OutboxSenderOptions & {
  /** The provider; null logs messages instead of sending them (embedded default). */
  transport: SmsTransport | null;
};

export type SmsSender = SmsQueue &
  Omit<OutboxSender, 'stop'> & {
    readonly mode: 'twilio' | 'log';
    /** Stops the loop and waits for sends in flight and their records. */
    close(): Promise<void>;
  };

export function createSmsSender(opts: SmsSenderOptions): SmsSender {
  const { db, clock, transport } = opts;
  const logger = opts.logger ?? silentLogger;
  const workerId = opts.workerId ?? `sms:${process.pid}:${randomBytes(4).toString('hex')}`;

  const sent = (row: SmsRow, providerId: string): Partial<SmsRow> => {
    const now = clock.now();
    logger.info({ smsId: row.id, template: row.template, to: row.to_phone, providerId }, 'sms sent');
    return {
      status: 'sent',
      attempts: row.attempts + 1,
      next_attempt_at: null,
      sent_at: now,
      last_error: null,
      provider_id: providerId,
      updated_at: now,
    };
  };
  // Deliberate dev-mode exception, as mail does without SMTP: the log is the only way to reach the signer.
  const logged = (row: SmsRow): Partial<SmsRow> => {
    logger.info(
      { smsId: row.id, template: row.template, sms: { to: row.to_phone, body: row.body } },
      'sms (no SMS_URL: logged, not sent)',
    );
    const now = clock.now();
    return { status: 'logged', next_attempt_at: null, sent_at: now, last_error: null, updated_at: now };
  };

  const sender = createOutboxSender<SmsRow>({
    name: 'sms',
    clock,
    workerId,
    logger,
    leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
    timeoutMs: opts.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
    batchSize: opts.batchSize ?? 50,
    // The log mode writes one line at a time.
    concurrency: transport ? (opts.concurrency ?? 4) : 1,
    pollIntervalMs: opts.pollIntervalMs ?? 1000,
    schedule: SMS_SCHEDULE,
    claim: (o) => claimSms(db, o),
    record: (row, patch) => recordSms(db, row, workerId, patch as Partial<SmsRow>),
    // Anything but the transport's own verdict (a failure reading the answer) may be transient: retried.
    permanent: (err) => err instanceof SmsSendError && !err.retryable,
    describe: describeError,
    logFields: (row) => ({ smsId: row.id, template: row.template, to: row.to_phone }),
    send: async (row) =>
      transport ? sent(row, (await transport.send({ to: row.to_phone, body: row.body })).providerId) : logged(row),
  });

  return {
    mode: transport ? transport.kind : 'log',
    ...createSmsQueue(clock),
    flush: () => sender.flush(),
    start: () => sender.start(),
    wake: () => sender.wake(),
    close: () => sender.stop(),
  };
}
