// Test shorthand: queue one message outside a transaction and deliver what is due now; the row's status afterwards.
import type { Db } from '../../db/db.js';
import type { Mailer } from '../mailer.js';
import { findMail, type MailStatus } from '../outbox.repo.js';
import type { OutgoingMail } from '../outbox.js';

export async function sendNow(db: Db, mailer: Mailer, msg: OutgoingMail): Promise<{ id: string; status: MailStatus }> {
  const { id } = await mailer.enqueue(db.kysely, msg);
  await mailer.flush();
  return { id, status: (await findMail(db, id))!.status as MailStatus };
}
