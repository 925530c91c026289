// `signet mail list` and `sms list|show`: the outgoing mail and text-message outboxes.
import type { Command } from 'commander';
import { listOutbox } from '../mail/outbox.js';
import { SMS_STATUSES, type SmsStatus } from '../sms/outbox.repo.js';
import { CliError, print, withDb } from './context.js';

// The text-message outbox brings the phone-number library: loaded by the `sms` commands only.
const smsOutbox = () => import('../sms/outbox.js');

export function addMailCommands(program: Command): void {
  program
    .command('mail')
    .description('outgoing mail')
    .command('list')
    .option('--document <id>', 'only mail about this document')
    .option('--to <email>', 'only mail to this address')
    .option('--json', 'print JSON')
    .action(async (o: { document?: string; to?: string; json?: boolean }) => {
      const rows = await withDb((db) => listOutbox(db, { documentId: o.document, to: o.to }));
      print(
        !!o.json,
        { mail: rows },
        rows.map((m) => `${m.id}\t${m.status}\t${m.to_email}\t${m.subject}`).join('\n') || '(none)',
      );
    });
}

export function addSmsCommands(program: Command): void {
  const sms = program.command('sms').description('outgoing text messages');
  sms
    .command('list')
    .option('--status <status>', `only this status: ${SMS_STATUSES.join('|')}`)
    .option('--limit <n>', 'at most n rows (1 to 500)', '50')
    .option('--json', 'print JSON')
    .action(async (o: { status?: string; limit: string; json?: boolean }) => {
      if (o.status !== undefined && !(SMS_STATUSES as readonly string[]).includes(o.status))
        throw new CliError(`--status must be one of ${SMS_STATUSES.join('|')}`);
      const { listSms } = await smsOutbox();
      const rows = await withDb((db) =>
        listSms(db, { status: o.status as SmsStatus | undefined, limit: Number(o.limit) || 50 }),
      );
      print(
        !!o.json,
        { sms: rows },
        rows
          .map((m) => `${m.id}\t${m.status}\t${m.to}\t${m.template}\tattempts ${m.attempts}\t${m.created_at}`)
          .join('\n') || '(none)',
      );
    });

  sms
    .command('show <id>')
    .description("one message with its text (which carries the signer's link)")
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const { getSms } = await smsOutbox();
      const m = await withDb((db) => getSms(db, id));
      if (!m) throw new CliError(`no sms ${id}`);
      print(!!o.json, { sms: m }, `${m.id}\t${m.status}\t${m.to}\t${m.template}\n${m.body}`);
    });
}
