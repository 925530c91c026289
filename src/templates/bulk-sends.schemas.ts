// Wire schemas of bulk sends (TypeBox): the JSON and CSV bodies, the bulk send as answered, and a dry run's report.
import { Type, type Static } from 'typebox';
import { MAX_BULK_ROWS } from '../limits.js';
import { InstantiateBody } from './instances.schemas.js';
import { ex } from './templates.schemas.js';

const bulkId = 'bulk_5e6f7a8b9c0d1e2f3a4b5c6d';
const rowExample = {
  recipients: [
    { slot: 'client', name: 'Ada Lovelace', email: 'ada@example.com' },
    { slot: 'provider', name: 'Grace Hopper', email: 'grace@example.com' },
  ],
  field_values: { client_name: 'Ada Lovelace Ltd', plan: 'pro' },
};
const csvExample =
  'client.name,client.email,provider.name,provider.email,client_name,plan\r\n' +
  'Ada Lovelace,ada@example.com,Grace Hopper,grace@example.com,Ada Lovelace Ltd,pro\r\n' +
  '"Hopper, Grace",grace@example.com,Ada Lovelace,ada@example.com,"Grace ""Amazing"" Hopper",basic\r\n';

const p = InstantiateBody.properties;
/** One row: an instantiate body without what the whole send shares (the version) or what it leaves out. */
export const BulkRowIn = Type.Object(
  {
    recipients: p.recipients,
    field_values: p.field_values,
    title: p.title,
    message: p.message,
    locale: p.locale,
    expires_at: p.expires_at,
    reminders: p.reminders,
  },
  { additionalProperties: false },
);
export type BulkRowIn = Static<typeof BulkRowIn>;

export const BulkSendBody = Type.Object(
  {
    rows: Type.Array(BulkRowIn, { minItems: 1, maxItems: MAX_BULK_ROWS }),
    version: p.version,
  },
  { additionalProperties: false, examples: [{ rows: [rowExample], version: 1 }] },
);
export type BulkSendBody = Static<typeof BulkSendBody>;

export const BulkSendCsv = Type.String({
  description:
    'RFC 4180 CSV, UTF-8 with or without a BOM. The header names the columns: `<slot>.name`, `<slot>.email`, ' +
    '`<slot>.phone` and `<slot>.channel` for each recipient slot, and the sender fields by key. One data row per ' +
    `instance, at most ${MAX_BULK_ROWS}; the version is \`?version=\` or the current one.`,
  examples: [csvExample],
});

export const BulkSendQuery = Type.Object(
  {
    dry_run: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    version: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,6}$', description: 'version number (CSV)' })),
  },
  { additionalProperties: false },
);

export const RowProblem = Type.Object({
  code: Type.String(),
  field: Type.Optional(Type.String()),
  message: Type.String(),
});
export type RowProblem = Static<typeof RowProblem>;

const BulkSendFields = {
  id: Type.String(),
  status: Type.Union([
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('completed'),
    Type.Literal('failed'),
  ]),
  total: Type.Integer(),
  sent: Type.Integer(),
  failed: Type.Integer(),
};
const created = { id: bulkId, status: 'queued', total: 200, sent: 0, failed: 0 };

export const BulkSendCreated = Type.Object(
  { bulk_send: Type.Object(BulkSendFields) },
  { examples: [{ bulk_send: created }] },
);
export type BulkSendCreated = Static<typeof BulkSendCreated>;

export const BulkRowOut = Type.Object({
  row: Type.Integer({ description: '1-based among the data rows (a CSV header line is not counted)' }),
  status: Type.Union([Type.Literal('sent'), Type.Literal('failed')]),
  template_instance_id: Type.Optional(Type.String()),
  problems: Type.Optional(Type.Array(RowProblem)),
});
export type BulkRowOut = Static<typeof BulkRowOut>;

const problemExample = {
  code: 'invalid_email',
  field: 'recipients[0].email',
  message: 'recipients[0].email is not an e-mail address.',
};

export const BulkSendDetail = Type.Object(
  { bulk_send: Type.Object({ ...BulkSendFields, rows: Type.Array(BulkRowOut) }) },
  {
    examples: [
      {
        bulk_send: {
          ...created,
          status: 'completed',
          total: 2,
          sent: 1,
          failed: 1,
          rows: [
            { row: 1, status: 'sent', template_instance_id: ex.instanceId },
            { row: 2, status: 'failed', problems: [problemExample] },
          ],
        },
      },
    ],
  },
);
export type BulkSendDetail = Static<typeof BulkSendDetail>;

export const DryRunOut = Type.Object(
  {
    dry_run: Type.Object({
      total: Type.Integer(),
      valid: Type.Integer(),
      invalid: Type.Integer(),
      rows: Type.Array(Type.Object({ row: Type.Integer(), problems: Type.Array(RowProblem) }), {
        description: 'Only the rows that would fail, with every problem each has.',
      }),
    }),
  },
  { examples: [{ dry_run: { total: 200, valid: 199, invalid: 1, rows: [{ row: 7, problems: [problemExample] }] } }] },
);
export type DryRunOut = Static<typeof DryRunOut>;
