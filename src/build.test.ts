// The build (scripts/build.mjs) on a tree of its own: what goes into dist/, when it is rebuilt, and that two processes
// starting at once build once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILD = fileURLToPath(new URL('../scripts/build.mjs', import.meta.url));
const { builder } = (await import(pathToFileURL(BUILD).href)) as {
  builder(root: string): {
    build(): Promise<{ modules: number; files: number }>;
    ensureBuilt(rel: string): Promise<{ url: URL; built: boolean }>;
  };
};

function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-build-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, 'src', rel)), { recursive: true });
    fs.writeFileSync(path.join(root, 'src', rel), text);
  }
  return root;
}
const listDist = (root: string) =>
  (fs.readdirSync(path.join(root, 'dist'), { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(root, 'dist', f)).isFile())
    .sort();

test('modules become JavaScript beside their copied files; tests and test helpers stay out', async () => {
  const root = tree({
    'main.ts': "import { two } from './lib/two.js';\nexport const answer = (n: number): number => two() * n;\n",
    'lib/two.ts': 'export const two = (): number => 2;\n',
    'lib/page.css': 'body { color: red }\n',
    'lib/types.d.ts': 'export type X = 1;\n',
    'main.test.ts': 'throw new Error("a test must not be built");\n',
    'testing/helper.ts': 'export const h = 1;\n',
  });
  const first = await builder(root).ensureBuilt('main');
  assert.equal(first.built, true);
  assert.deepEqual(listDist(root), ['.stamp', 'lib/page.css', 'lib/two.js', 'lib/types.d.ts', 'main.js']);
  const mod = (await import(first.url.href)) as { answer(n: number): number };
  assert.equal(mod.answer(21), 42, 'the built module runs');
  fs.rmSync(root, { recursive: true });
});

test('kysely and typebox are bundled into dist/.vendor/, and the modules import them from there', async () => {
  const root = tree({
    'main.ts':
      "import { Type } from 'typebox';\nimport { Value } from 'typebox/value';\nexport { sql } from 'kysely';\n" +
      'export const ok = (v: unknown): boolean => Value.Check(Type.Object({ n: Type.Integer() }), v);\n',
    'lib/lazy.ts': "export const load = () => import('kysely');\n",
  });
  const first = await builder(root).ensureBuilt('main');
  const dist = listDist(root);
  for (const f of ['.vendor/kysely.js', '.vendor/typebox.js', '.vendor/typebox-value.js'])
    assert.ok(dist.includes(f), `${f} in ${dist.join(', ')}`);
  const main = fs.readFileSync(path.join(root, 'dist/main.js'), 'utf8');
  assert.doesNotMatch(main, /"(kysely|typebox)(\/\w+)?"/, 'no bare import of a vendored package is left');
  assert.match(
    fs.readFileSync(path.join(root, 'dist/lib/lazy.js'), 'utf8'),
    /import\("\.\/\.\.\/\.vendor\/kysely\.js"\)/,
  );
  const mod = (await import(first.url.href)) as { ok(v: unknown): boolean; sql: unknown };
  assert.equal(mod.ok({ n: 1 }), true, "typebox's value checks run from the bundle");
  assert.equal(mod.ok({ n: 1.5 }), false);
  assert.equal(typeof mod.sql, 'function', "kysely's exports come through");
  fs.rmSync(root, { recursive: true });
});

test('dist/ is rebuilt only when a source changed, and loses the outputs of deleted sources', async () => {
  const root = tree({ 'main.ts': 'export const v = 1;\n', 'old.ts': 'export const o = 1;\n' });
  const b = builder(root);
  assert.equal((await b.ensureBuilt('main')).built, true);
  assert.equal((await b.ensureBuilt('main')).built, false, 'unchanged sources: the build is used as it is');

  fs.writeFileSync(path.join(root, 'src/main.ts'), 'export const v = 2;\n');
  fs.rmSync(path.join(root, 'src/old.ts'));
  const again = await b.ensureBuilt('main');
  assert.equal(again.built, true, 'an edited source rebuilds');
  assert.match(fs.readFileSync(path.join(root, 'dist/main.js'), 'utf8'), /v = 2/);
  assert.ok(!fs.existsSync(path.join(root, 'dist/old.js')), "a deleted source's output is gone");
  fs.rmSync(root, { recursive: true });
});

test('processes starting together build once; the others wait and use that build', async () => {
  const root = tree({ 'main.ts': 'export const v = 1;\n' });
  const script = `const { builder } = await import(${JSON.stringify(pathToFileURL(BUILD).href)});
const r = await builder(${JSON.stringify(root)}).ensureBuilt('main');
console.log(r.built ? 'built' : 'reused');`;
  const run = () => promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  const outs = (await Promise.all([run(), run(), run(), run()])).map((r) => r.stdout.trim()).sort();
  assert.deepEqual(outs, ['built', 'reused', 'reused', 'reused']);
  assert.ok(!fs.existsSync(path.join(root, '.dist.lock')), 'the lock is released');
  fs.rmSync(root, { recursive: true });
});
