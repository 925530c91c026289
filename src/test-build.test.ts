// The tree the suite runs from (scripts/test-build.mjs), built from a small repository of its own: modules become
// JavaScript beside links to every source, folders without TypeScript are one link, and a test runs under plain node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/test-build.mjs', import.meta.url));
const { buildTestTree, bundleTests, testsOf } = (await import(pathToFileURL(SCRIPT).href)) as {
  buildTestTree(root: string, out: string): Promise<number>;
  bundleTests(out: string, tests: string[]): Promise<string[]>;
  testsOf(out: string): string[];
};

test('test tree: transpiled modules beside linked sources; a test under plain node reads its fixture and root', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-test-build-'));
  const files: Record<string, string> = {
    'src/lib/two.ts': 'export const two = (n: number): number => 2 * n;\n',
    'src/lib/fixture.txt': 'Grüße, Zoë\n',
    'src/lib/two.test.ts': [
      "import fs from 'node:fs';",
      "import { two } from './two.js';",
      "const fixture = fs.readFileSync(new URL('./fixture.txt', import.meta.url), 'utf8').trim();",
      "const tool = fs.readFileSync(new URL('../../bin/tool.sh', import.meta.url), 'utf8').trim();",
      'process.stdout.write(JSON.stringify({ four: two(2), fixture, tool }));',
    ].join('\n'),
    'src/types.d.ts': 'export type X = 1;\n',
    'bin/tool.sh': 'echo tool\n',
    'docs/page.md': '# Page\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  fs.mkdirSync(path.join(root, '.git'));
  const out = path.join(root, '.test-build');
  try {
    assert.equal(await buildTestTree(root, out), 2, 'the module and its test; a declaration file is not a module');
    const link = (rel: string) => fs.readlinkSync(path.join(out, rel));
    assert.equal(link('bin'), path.join(root, 'bin'), 'a folder without TypeScript is one link');
    assert.equal(link('docs'), path.join(root, 'docs'));
    assert.equal(link('src/lib/two.ts'), path.join(root, 'src/lib/two.ts'), 'the source stays beside its output');
    assert.equal(link('src/lib/fixture.txt'), path.join(root, 'src/lib/fixture.txt'));
    assert.ok(fs.lstatSync(path.join(out, 'src/lib/two.js')).isFile(), 'the output is a real file');
    assert.ok(!fs.existsSync(path.join(out, '.git')), "git's data is not mirrored");
    assert.ok(!fs.existsSync(path.join(out, '.test-build')), 'the tree does not hold itself');
    // Plain node, no loader: what the suite does.
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(out, 'src/lib/two.test.js')]);
    assert.deepEqual(JSON.parse(stdout), { four: 4, fixture: 'Grüße, Zoë', tool: 'echo tool' });
    // Rebuilt whole: a deleted source leaves no output behind.
    fs.rmSync(path.join(root, 'src/lib/two.test.ts'));
    assert.equal(await buildTestTree(root, out), 1);
    assert.ok(!fs.existsSync(path.join(out, 'src/lib/two.test.js')), 'no output of a deleted source');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('bundled tests: each module and package still sees its own place; run-time package imports stay packages', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-test-bundle-'));
  const files: Record<string, string> = {
    // A CommonJS package that reads a file beside itself, as font and asset packages do.
    'node_modules/glyphs/package.json': JSON.stringify({ name: 'glyphs', main: 'index.js' }),
    'node_modules/glyphs/index.js':
      "const fs = require('fs'); exports.name = fs.readFileSync(__dirname + '/name.txt', 'utf8').trim(); exports.file = __filename;\n",
    'node_modules/glyphs/name.txt': 'Ærøskøbing 東京\n',
    'src/lib/where.ts': [
      "import { fileURLToPath } from 'node:url';",
      'export const where = (): string => fileURLToPath(import.meta.url);',
      "export const note = 'import.meta.url in a string stays text';",
    ].join('\n'),
    'src/lib/fixture.txt': 'Grüße, Zoë\n',
    'src/lib/where.test.ts': [
      "import fs from 'node:fs';",
      "import { name, file } from 'glyphs';",
      "import { where, note } from './where.js';",
      "const fixture = fs.readFileSync(new URL('./fixture.txt', import.meta.url), 'utf8').trim();",
      "const late = await import('glyphs');",
      'process.stdout.write(JSON.stringify({ name, file, where: where(), note, fixture, late: late.name }));',
    ].join('\n'),
    // A worker thread's entry, loaded by path: bundled whole where it is.
    'src/lib/echo.worker.ts': "import { where } from './where.js';\nprocess.stdout.write(where());\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  const out = path.join(root, '.test-build');
  try {
    await buildTestTree(root, out);
    const tests = testsOf(out);
    assert.deepEqual(tests, [path.join(out, 'src/lib/where.test.js')]);
    const [bundled] = await bundleTests(out, tests);
    assert.equal(bundled, path.join(out, '.run/src/lib/where.test.js'));
    assert.ok(
      !fs.readFileSync(bundled!, 'utf8').match(/from ["']\.\/where\.js["']/),
      'the module is inside the bundle',
    );
    const { stdout } = await promisify(execFile)(process.execPath, [bundled!]);
    assert.deepEqual(JSON.parse(stdout), {
      name: 'Ærøskøbing 東京',
      file: path.join(root, 'node_modules/glyphs/index.js'),
      where: path.join(out, 'src/lib/where.js'),
      note: 'import.meta.url in a string stays text',
      fixture: 'Grüße, Zoë',
      late: 'Ærøskøbing 東京',
    });
    const worker = path.join(out, 'src/lib/echo.worker.js');
    assert.ok(
      !fs.readFileSync(worker, 'utf8').match(/from ["']\.\/where\.js["']/),
      'the worker entry is bundled in place',
    );
    const run = await promisify(execFile)(process.execPath, [worker]);
    assert.equal(run.stdout, path.join(out, 'src/lib/where.js'), 'its modules still see their own place');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
