// ESLint flat config: @eslint/js recommended for all code, typescript-eslint `recommended` (syntax only, not
// type-checked, so it stays fast) for TypeScript. Formatting belongs to Prettier (see .prettierrc.json); neither
// recommended set enables a layout rule, so eslint-config-prettier is not needed.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Code that only runs under the test runner: test files and the test helpers next to them.
const TEST_FILES = ['**/*.test.ts', 'src/testing/**', 'src/**/testing/**', 'cluster/**'];

// The `_` prefix marks an intentionally unused binding (`(_req, reply) => ...`, `Array.from({ length }, (_, i) => i)`),
// the same convention TypeScript uses for unused parameters.
const unusedVarsOptions = {
  args: 'after-used',
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrors: 'all',
  caughtErrorsIgnorePattern: '^_',
  destructuredArrayIgnorePattern: '^_',
};

export default defineConfig([
  globalIgnores(['node_modules/', 'data/', '.tmp/', 'coverage/', 'dist/', 'sdk/dist/', '.scratch/', '.test-build/']),

  { files: ['**/*.{ts,js,mjs}'], extends: [js.configs.recommended] },
  { files: ['**/*.ts'], extends: [tseslint.configs.recommended] },

  // Everything runs on Node except the signer, review and embed pages' scripts, browser ES modules served as-is, and
  // the embedded-signing helper signet.js, a classic browser script for host pages.
  {
    files: ['**/*.{ts,js,mjs}'],
    ignores: [
      'src/signing/page/*.js',
      'src/templates/review/*.js',
      'src/embedded/assets/*.js',
      'src/dashboard/assets/*.js',
    ],
    languageOptions: { globals: globals.node },
  },
  {
    files: [
      'src/signing/page/*.js',
      'src/templates/review/*.js',
      'src/embedded/assets/bridge.js',
      'src/dashboard/assets/field-editor.js',
      'src/dashboard/assets/send.js',
      'src/dashboard/assets/template-fields.js',
    ],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  {
    files: ['src/embedded/assets/signet.js', 'src/dashboard/assets/dashboard.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },

  {
    files: ['**/*.{js,mjs}'],
    rules: { 'no-unused-vars': ['error', unusedVarsOptions] },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', unusedVarsOptions],
      // Stripping control characters is deliberate: input and output sanitisers (PDF text, mail headers, PostgreSQL
      // text, which cannot hold NUL) match them on purpose, and the tests check that they are refused.
      'no-control-regex': 'off',
      // An `any` in application code needs a disable comment saying why (Kysely's generic bounds, migrations).
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Tests read untyped JSON responses and webhook payloads (`r.json.signing_requests.map((x: any) => ...)`).
    files: TEST_FILES,
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      // A failing one-argument assert.ok makes node's assert parse the test's source to build its message, and on a
      // tsx-transformed file that parse never ends: the test hangs instead of failing. Always give a message.
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='assert'][callee.property.name='ok'][arguments.length=1]",
          message: 'Give assert.ok a message: without one, a failure hangs under tsx instead of failing.',
        },
      ],
    },
  },
  {
    // Kysely migrations take `Kysely<any>` on purpose: a migration is frozen in time and must not depend on the
    // current schema types (https://kysely.dev/docs/migrations).
    files: ['src/db/migrations/**', 'src/db/migrate.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
]);
