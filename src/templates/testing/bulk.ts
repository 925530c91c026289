// Bulk-send fixtures: a CSV for the fixtures' template (fixtures.ts: slots client and provider, sender fields
// client_name, plan, seats, start_date), with chosen rows broken, and counts read from the database.
import { sql } from 'kysely';
import type { Db } from '../../db/db.js';

export const HEADER = 'client.name,client.email,provider.name,provider.email,client_name,plan,seats,start_date';

/** Each way a row is broken, the problem code it must be reported with, and the row itself. */
export const BREAKS = {
  email: { code: 'invalid_email', cells: (i: number) => [`Client ${i}`, `not-an-address`] },
  plan: { code: 'invalid_enum', plan: 'gold' },
  name: { code: 'name_required', cells: (i: number) => ['', clientEmail('', i)] },
  seats: { code: 'invalid_type', seats: 'many' },
  cells: { code: 'invalid_request' },
} as const;
export type Break = keyof typeof BREAKS;

export const clientEmail = (run: string, i: number) => `client${i}.${run}@example.com`;

const quote = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/**
 * `n` data rows; row i (1-based) is broken as `broken[i]` says. Some good cells need quoting (a comma, a quote,
 * a line break), the file starts with a BOM and uses CRLF, as spreadsheets write it.
 */
export function bulkCsv(run: string, n: number, broken: Record<number, Break> = {}): string {
  const lines = [HEADER];
  for (let i = 1; i <= n; i++) {
    const how = broken[i];
    let client = [`Client, ${i}`, clientEmail(run, i)];
    let plan = i % 2 ? 'pro' : 'basic';
    let seats = String(i);
    if (how === 'email' || how === 'name') client = [...BREAKS[how].cells(i)];
    if (how === 'name') client[1] = clientEmail(run, i);
    if (how === 'plan') plan = BREAKS.plan.plan;
    if (how === 'seats') seats = BREAKS.seats.seats;
    const cells = [...client, 'Provider Person', `provider.${run}@example.com`, `Client "${i}" Ltd\nBranch`, plan];
    if (how !== 'cells') cells.push(seats, '2026-12-01');
    lines.push(cells.map(quote).join(','));
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

export async function countRows(db: Db, table: 'template_instances' | 'bulk_sends' | 'documents', templateId: string) {
  const r = await sql<{
    n: number;
  }>`select count(*) as n from ${sql.table(table)} where template_id = ${templateId}`.execute(db.kysely);
  return Number(r.rows[0]!.n);
}

/** Mails addressed to `address` so far. */
export const mailsTo = (mails: { to?: unknown }[], address: string) =>
  mails.filter((m) =>
    [m.to]
      .flat()
      .some((a) => (a as { value?: { address?: string }[] } | undefined)?.value?.some((v) => v.address === address)),
  ).length;
