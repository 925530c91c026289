// A real SMTP server on loopback for tests: accepts everything (or rejects chosen recipients with 550) and keeps
// each message's raw bytes and envelope.
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export type Received = { raw: Buffer; from: string; to: string[] };

export type SmtpPeer = {
  port: number;
  url: string;
  received: Received[];
  parsed(): Promise<ParsedMail[]>;
  close(): Promise<void>;
};

export async function startSmtpPeer(
  opts: { port?: number; reject?: (rcpt: string) => boolean } = {},
): Promise<SmtpPeer> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 200,
    onRcptTo(address, _session, cb) {
      if (opts.reject?.(address.address)) {
        return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push({ raw: Buffer.concat(chunks), from, to: session.envelope.rcptTo.map((r) => r.address) });
        cb();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    parsed: () => Promise.all(received.map((r) => simpleParser(r.raw))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
