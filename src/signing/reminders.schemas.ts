// The `reminders` field of POST /v1/signing-requests and template instantiate, and of their answers (TypeBox).
import { Type } from 'typebox';
import { MAX_AUTO_REMINDERS, REMINDER_AFTER_DAYS, REMINDER_EVERY_DAYS } from '../limits.js';

const Policy = Type.Object(
  {
    after_days: Type.Integer({
      minimum: REMINDER_AFTER_DAYS.min,
      maximum: REMINDER_AFTER_DAYS.max,
      description: 'days after a signer is invited (or released, in sequential order) until the first reminder',
    }),
    every_days: Type.Integer({
      minimum: REMINDER_EVERY_DAYS.min,
      maximum: REMINDER_EVERY_DAYS.max,
      description: 'days between later reminders',
    }),
  },
  { additionalProperties: false },
);

export const RemindersIn = Type.Union([Policy, Type.Null()], {
  description:
    `Automatic reminders (Signet addition): each signer who has not acted gets at most ${MAX_AUTO_REMINDERS}, ` +
    'none in the last 48 hours before expiry (an expiry warning goes out then). Absent: the workspace default ' +
    '(`signet workspace reminders`, or the dashboard’s Settings); `null`: none.',
  examples: [{ after_days: 3, every_days: 2 }],
});

export const RemindersOut = Type.Union([Policy, Type.Null()], {
  description: 'The automatic reminders this document got at creation (Signet addition); null: none.',
});
