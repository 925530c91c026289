// Shared wire schemas (TypeBox): the same objects validate requests and generate the OpenAPI document.
import { Type } from '@fastify/type-provider-typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
    ip: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { $id: 'Error', description: 'Every error: a human-readable `error`, a stable `code`, optional `meta`.' },
);

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));

/** Statuses every authenticated route can answer. */
export const AUTH_ERRORS = [401, 402, 403, 429] as const;

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
