// npm run generate -w @signet/sdk: regenerates src/generated/openapi.ts from the real app's GET /v1/openapi.json.
import fs from 'node:fs';
import { GENERATED_FILE, fetchOpenApiDocument, relative, renderTypes } from './openapi-types.js';

const text = await renderTypes(await fetchOpenApiDocument());
const before = fs.existsSync(GENERATED_FILE) ? fs.readFileSync(GENERATED_FILE, 'utf8') : null;
fs.mkdirSync(new URL('../src/generated/', import.meta.url), { recursive: true });
fs.writeFileSync(GENERATED_FILE, text);
console.log(`${relative(GENERATED_FILE)}: ${before === text ? 'unchanged' : 'written'} (${text.length} bytes)`);
