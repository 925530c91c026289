// The checked-in types must be what the app's OpenAPI document generates today.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  GENERATED_FILE,
  GENERATE_COMMAND,
  fetchOpenApiDocument,
  relative,
  renderTypes,
} from '../scripts/openapi-types.js';

test('sdk/src/generated/openapi.ts matches GET /v1/openapi.json', async () => {
  const fresh = await renderTypes(await fetchOpenApiDocument());
  const stored = fs.existsSync(GENERATED_FILE) ? fs.readFileSync(GENERATED_FILE, 'utf8') : '';
  if (fresh === stored) return;
  const a = stored.split('\n');
  const b = fresh.split('\n');
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  assert.fail(
    `${relative(GENERATED_FILE)} is stale: the API's OpenAPI document changed. Run \`${GENERATE_COMMAND}\` and commit ` +
      `the result.\nFirst difference at line ${i + 1}:\n  checked in: ${a[i] ?? '(end of file)'}\n  generated:  ${
        b[i] ?? '(end of file)'
      }`,
  );
});
