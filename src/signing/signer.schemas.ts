// Wire schemas of the signer's routes (/sign/<token>, and the embed page's, which reuse them).
import { Type, type Static } from 'typebox';
import { MAX_FIELD_VALUE_LENGTH, MAX_FIELDS } from '../limits.js';

// ── /sign/<token> ────────────────────────────────────────────────────────────────────────────────────────────────
export const TokenParam = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
export const SignBody = Type.Object(
  {
    signature: Type.Union([
      Type.Object(
        { type: Type.Literal('typed'), text: Type.String({ minLength: 1, maxLength: 200 }) },
        { additionalProperties: false },
      ),
      Type.Object(
        { type: Type.Literal('drawn'), png_base64: Type.String({ minLength: 1, maxLength: 3_000_000 }) },
        { additionalProperties: false },
      ),
    ]),
    fields: Type.Optional(
      Type.Record(
        Type.String({ maxLength: 20 }),
        Type.Union([Type.String({ maxLength: MAX_FIELD_VALUE_LENGTH }), Type.Number(), Type.Boolean()]),
        {
          maxProperties: MAX_FIELDS,
          description:
            'the signer’s values by field id: a string (text, e-mail, enum, date as YYYY-MM-DD), a number or a boolean (checkbox)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SignBody = Static<typeof SignBody>;
export const DeclineBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 2000 }) },
  { additionalProperties: false },
);
export const SignerActionOut = Type.Object({ status: Type.String() });
