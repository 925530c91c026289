// Where outbox rows go: an SMTP server through nodemailer (pooled connections, a time limit per message, a fixed
// Message-ID per row so receivers can drop a repeat), or, with no SMTP_URL, the log. The mail job decides retries.
// A message whose HTML names its logo's Content-ID goes as multipart/related with the workspace's logo attached
// inline; a logo that cannot be read then (removed since, unreadable) drops the image, never the message.
import type { Transporter } from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { Clock } from '../lib/clock.js';
import { isHeaderAddress } from '../lib/email.js';
import { describeError, type Logger } from '../lib/logger.js';
import type { MailRow } from './outbox.repo.js';
import { logoCid } from './outbox.js';
import { oneLine } from './templates.js';

/** A workspace's logo as it is now: its bytes and media type (PNG or JPEG); null when it has none. */
export type LogoSource = (workspaceId: string) => Promise<{ bytes: Uint8Array; type: string } | null>;

export type MailTransport = {
  readonly mode: 'smtp' | 'log';
  /** Sends one row; resolves with the Message-ID it carried (null when only logged); throws when it was not sent. */
  deliver(row: MailRow): Promise<string | null>;
  /** Error text for the row and the log, never with the SMTP password. */
  describe(err: unknown): string;
  close(): void;
};

export type TransportOptions = {
  /** `smtp://` or `smtps://` URL; null prints mail to the log instead (embedded default). */
  smtpUrl: string | null;
  /** Envelope and From address with the product's display name, e.g. `Signet <no-reply@example.com>`. */
  from: string;
  clock: Clock;
  logger: Logger;
  /** Pooled SMTP connections. */
  connections: number;
  /** Upper bound on one send. */
  sendTimeoutMs: number;
  /** Where a branded message's inline logo comes from; without it, such messages go without the image. */
  logo?: LogoSource;
};

/** The HTML to send and its inline parts: the logo under the Content-ID the HTML names, or the image removed. */
async function inlineLogo(row: MailRow, logo: LogoSource | undefined) {
  const cid = logoCid(row.id);
  if (!row.html.includes(`src="cid:${cid}"`)) return { html: row.html, attachments: [] };
  const found = await logo?.(row.workspace_id).catch(() => null);
  if (!found) return { html: row.html.replace(/<img src="cid:[^"]*"[^>]*>\n?/, ''), attachments: [] };
  const ext = found.type === 'image/png' ? 'png' : 'jpg';
  const content = Buffer.from(found.bytes.buffer, found.bytes.byteOffset, found.bytes.byteLength);
  return {
    html: row.html,
    attachments: [
      { cid, filename: `logo.${ext}`, content, contentType: found.type, contentDisposition: 'inline' as const },
    ],
  };
}

class SendTimeout extends Error {}

export function createTransport(o: TransportOptions): MailTransport {
  const parsedFrom = addressparser(o.from, { flatten: true });
  if (parsedFrom.length !== 1 || !isHeaderAddress(parsedFrom[0]!.address)) {
    throw new Error(`mail from must be one address like "Signet <no-reply@example.com>", got "${o.from}"`);
  }
  if (!o.smtpUrl) return logTransport(o.logger);

  const fromAddress = parsedFrom[0]!.address;
  const brand = oneLine(parsedFrom[0]!.name) || 'Signet';
  const fromDomain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1);
  const u = new URL(o.smtpUrl);
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new Error('smtpUrl must use smtp: or smtps:');
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  const smtpUrl = o.smtpUrl;
  // nodemailer loads with the first message, so a process that sends none (an API instance) never loads it.
  let transport: Promise<Transporter> | undefined;
  let open: Transporter | undefined;
  const connect = () =>
    (transport ??= (async () => {
      const [{ default: nodemailer }, { parseConnectionUrl }] = await Promise.all([
        import('nodemailer'),
        import('nodemailer/lib/shared/index.js'),
      ]);
      open = nodemailer.createTransport({
        ...parseConnectionUrl(smtpUrl),
        pool: true,
        maxConnections: o.connections,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      });
      return open;
    })());

  return {
    mode: 'smtp',
    async deliver(row) {
      const messageId = `<${row.id}@${fromDomain}>`;
      let timer: NodeJS.Timeout | undefined;
      try {
        const smtp = await connect();
        const { html, attachments } = await inlineLogo(row, o.logo);
        await Promise.race([
          smtp.sendMail({
            from: { name: `${row.from_name} via ${brand}`, address: fromAddress },
            to: { name: row.to_name, address: row.to_email },
            ...(row.reply_to ? { replyTo: row.reply_to } : {}),
            subject: row.subject,
            text: row.text,
            html,
            ...(attachments.length ? { attachments } : {}),
            messageId,
            date: new Date(o.clock.now()),
            headers: { 'Auto-Submitted': 'auto-generated', 'Content-Language': row.locale },
          }),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new SendTimeout(`no SMTP answer within ${o.sendTimeoutMs} ms`)),
              o.sendTimeoutMs,
            );
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
      return messageId;
    },
    describe: (err) => describeError(err, [password]),
    close: () => open?.close(),
  };
}

// Deliberate dev-mode exception: with no SMTP configured, the log is the only way a developer on the embedded
// default can reach a signer link, so the text body (and the links in it) is logged. With SMTP set, no log line
// ever carries a body or a link: they hold signer tokens.
function logTransport(logger: Logger): MailTransport {
  return {
    mode: 'log',
    async deliver(row) {
      const links = row.text.match(/https?:\/\/\S+/g) ?? [];
      logger.info(
        { mailId: row.id, template: row.template, to: row.to_email, subject: row.subject, links, text: row.text },
        'mail not sent: no SMTP_URL configured, logged instead',
      );
      return null;
    },
    describe: (err) => describeError(err),
    close() {},
  };
}

/** A 5xx answer to the envelope or the message, or an address nodemailer refused before sending. */
export function isPermanent(err: unknown): boolean {
  const e = err as { code?: string; responseCode?: number; command?: string };
  if (e?.code !== 'EENVELOPE' && e?.code !== 'EMESSAGE') return false;
  return (typeof e.responseCode === 'number' && e.responseCode >= 500) || e.command === 'API';
}
