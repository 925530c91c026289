// What the OpenAPI document says beyond the routes' own schemas: the API's introduction, the error catalogue (built
// from lib/errors.ts, so the reference can never list a code the service does not have, or miss one), which routes
// it covers, how its shared schemas are named, and the webhook events (webhooks.ts).
import { STATUS_CODES } from 'node:http';
import type { FastifySchema } from 'fastify';
import { catalogue } from '../lib/errors.js';
import {
  RATE_LIMIT,
  RATE_WINDOW_MS,
  WEBHOOK_DEFER_MAX_MS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_DELAYS_MS,
  WEBHOOK_SLOW_MS,
  WEBHOOK_SLOW_TARGET_IN_FLIGHT,
  WEBHOOK_TIMEOUT_MS,
} from '../limits.js';
import { publishWebhooks, type WebhookDocument } from './webhooks.js';

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** Every entry of the catalogue, by status then code: one markdown table row each. */
export function errorCatalogueTable(): string {
  const rows = [...Object.values(catalogue)]
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code))
    .map((e) => `| \`${e.code}\` | ${e.status} | ${cell(e.message)} |`);
  return ['| Code | Status | Meaning |', '|---|---|---|', ...rows].join('\n');
}

const duration = (ms: number) =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;

/** `info.description`: Redoc shows each `#` heading as a section of its own in the navigation. */
export function apiDescription(): string {
  return `Electronic signatures: signing requests, sealed PDFs, audit trails and signed webhooks.

# Authentication

Every \`/v1\` request carries \`Authorization: Bearer <API_KEY>\` (\`svk_live_…\`, or a legacy \`lgk_live_…\` key).
The key alone selects the workspace. Each key may send ${RATE_LIMIT} requests per ${RATE_WINDOW_MS / 1000}-second
window (\`GET /v1/me\` excepted); successful answers and 429s carry \`RateLimit-Limit\`, \`RateLimit-Remaining\`,
\`RateLimit-Reset\` and \`RateLimit-Policy\`. A POST or DELETE may carry \`Idempotency-Key\`: a repeat within 24 hours
gets the stored answer with \`Idempotent-Replayed: true\`.

# Addresses

\`servers\` lists the service's address and, where the deployment has one, its permanent alias address. Both serve
the same API with the same keys, one rate-limit window per key and one set of Idempotency-Key records; an alias with
a path serves \`/v1\` under that path. Links in answers and events (\`signed_pdf_url\`, \`audit_trail_url\`, review
and signer links) always use the first address.

# Webhook deliveries

A delivery succeeds on a complete 2xx answer within ${duration(WEBHOOK_TIMEOUT_MS)}; redirects are not followed.
After a failure it is retried after ${WEBHOOK_RETRY_DELAYS_MS.map(duration).join(', ')}, and ends \`giving_up\` after
the ${WEBHOOK_MAX_ATTEMPTS}th failure. Delivery is at least once: deduplicate on \`event_id\`. A receiver (a URL's
scheme, host and port) that leaves a request unanswered for ${duration(WEBHOOK_SLOW_MS)} is slow: each worker then
keeps at most ${WEBHOOK_SLOW_TARGET_IN_FLIGHT} requests in flight to it, and defers its other due deliveries (still
\`pending\` or \`retrying\`, no attempt counted, \`next_attempt_at\` moved later by at most
${duration(WEBHOOK_DEFER_MAX_MS)}), so that one slow receiver does not delay the others.

# Review staging

A deployment may switch review staging off: instantiate or generate with \`review: true\` then answers 503
\`review_unavailable\` without \`Retry-After\` (waiting will not bring it back) and creates nothing; without
\`review\` they work as usual. The same code with \`Retry-After\` means the deployment's database is not yet
migrated for templates: retry later.

# Errors

Every error has the same body: a human-readable \`error\` (its text may change), a stable \`code\` to branch on, and
optional \`meta\` with structured context (for schema violations, \`meta.field\` and \`meta.problems\`).
\`ip_not_allowed\` carries the observed address as \`ip\` at the top level (\`null\` when unknown).

<SchemaDefinition schemaRef="#/components/schemas/Error" showReadOnly={true} showWriteOnly={true} />

## Error codes

${errorCatalogueTable()}
`;
}

/** Only the JSON API is the API: signer pages and the dashboard are not (nor do they take an API key). */
export const onlyTheApi = ({ schema, url }: { schema: FastifySchema; url: string }) => ({
  schema: url.startsWith('/v1/') ? schema : { ...schema, hide: true },
  url,
});

/** A response whose schema has no description is described by its status ("Accepted"), not "Default Response". */
type Operations = Record<string, Record<string, { responses?: Record<string, { description?: string }> }>>;
function describeResponses(doc: { paths?: Operations }) {
  for (const methods of Object.values(doc.paths ?? {}))
    for (const op of Object.values(methods))
      for (const [status, r] of Object.entries(op.responses ?? {}))
        if (r.description === 'Default Response') r.description = STATUS_CODES[status] ?? status;
}

/** @fastify/swagger's last step: responses described by their status, then the webhook events published. */
export function finishDocument(d: { openapiObject: object } | { swaggerObject: object }) {
  const doc = ('openapiObject' in d ? d.openapiObject : d.swaggerObject) as { paths?: Operations } & WebhookDocument;
  describeResponses(doc);
  return publishWebhooks(doc) as never;
}

/** Shared schemas are named by their `$id` (`Error`) instead of `def-0`. */
export const refResolver = {
  buildLocalReference: (json: { $id?: unknown }, _base: unknown, _fragment: unknown, i: number) =>
    typeof json.$id === 'string' ? json.$id : `def-${i}`,
};
