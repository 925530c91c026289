// Schema checks as tests make them: strictly (a property a schema does not declare fails, unless the schema says
// it may have more), and webhook bodies against their event's schema (webhooks/events.schemas.ts). The validator
// is loaded here, in tests only: the server imports `Type` alone.
import Schema from 'typebox/schema';
import { isEventName, type EventName } from '../webhooks/events.js';
import { eventBodySchema } from '../webhooks/events.schemas.js';

/**
 * The schema with every object that declares properties closed to others (where it says nothing), and each
 * `$ref` inlined from `refs` (the OpenAPI document's `components.schemas`). `examples` are left as they are.
 */
export function strictSchema(s: any, refs: Record<string, unknown> = {}): any {
  if (Array.isArray(s)) return s.map((x) => strictSchema(x, refs));
  if (!s || typeof s !== 'object') return s;
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/components/schemas/', '');
    if (!(name in refs)) throw new Error(`unresolved ${s.$ref}`);
    return strictSchema(refs[name], refs);
  }
  const out: any = Object.fromEntries(
    Object.entries(s).map(([k, v]) => [k, k === 'examples' ? v : strictSchema(v, refs)]),
  );
  if (out.type === 'object' && out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const validators = new Map<EventName, ReturnType<typeof Schema.Compile>>();
const validator = (name: EventName) => {
  let v = validators.get(name);
  if (!v) validators.set(name, (v = Schema.Compile(strictSchema(eventBodySchema(name)))));
  return v;
};

/** What is wrong with one webhook body (its raw text): nothing when it fits its event's schema exactly. */
export function eventBodyProblems(body: string): string[] {
  let value: any;
  try {
    value = JSON.parse(body);
  } catch {
    return ['the body is not JSON'];
  }
  const name = value?.event;
  if (typeof name !== 'string' || !isEventName(name)) return [`no event of that name: ${JSON.stringify(name)}`];
  const [ok, errors] = validator(name).Errors(value);
  return ok ? [] : errors.map((e) => `${name} ${e.instancePath || '/'}: ${e.message} ${JSON.stringify(e.params)}`);
}
