// Shared wire schemas (TypeBox): the same objects validate requests and generate the OpenAPI document.
import { Type } from 'typebox';
import { apiError, type ApiErrorOptions, type ErrorName } from '../lib/errors.js';

/** An error body exactly as the service renders it, for the OpenAPI document's examples. */
export const errorExample = (name: ErrorName, opts?: ApiErrorOptions) => apiError(name, opts).body();

export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
    ip: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  {
    $id: 'Error',
    description: 'Every error: a human-readable `error`, a stable `code`, optional `meta`.',
    examples: [
      errorExample('invalid_request', {
        message: 'Invalid body: ttl_seconds must be >= 60.',
        meta: { field: 'ttl_seconds', problems: [{ field: 'ttl_seconds', message: 'must be >= 60' }] },
      }),
    ],
  },
);

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));

/** Statuses every authenticated route can answer. */
export const AUTH_ERRORS = [401, 402, 403, 429] as const;

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
