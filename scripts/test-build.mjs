// The tree the test suite runs from (scripts/test.sh): `.test-build/`, the repository with every TypeScript module
// (tests and test helpers included) transpiled by esbuild to JavaScript in the same place, and
// everything else a symbolic link to the original. Node then loads plain JavaScript: under tsx every test process
// spent 1–3 s of CPU more on loading (its hooks run on a thread of their own and see every import), about a third of
// the suite's machine time on two cores. Paths taken relative to a module hold in both trees: the .ts sources, pages'
// assets, views and fixtures sit beside the .js files as links, and the root's files (bin/, dist/, node_modules/, …)
// are links one level up. Rebuilt whole on every run (a few seconds), so it is never stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Never mirrored (trees of their own, git's data) or linked whole without a look inside (no sources of ours in them).
const SKIP = new Set(['.git', '.test-build']);
const WHOLE = new Set(['node_modules', 'dist', 'data', '.tmp', '.scratch', '.cluster', 'coverage']);

const isModule = (f) => f.endsWith('.ts') && !f.endsWith('.d.ts');

/** Writes the test tree of the repository at `root` to `out` (its .test-build/); returns the modules transpiled. */
export async function buildTestTree(root, out) {
  const holdsModules = (rel) =>
    fs
      .readdirSync(path.join(root, rel), { withFileTypes: true })
      .some((e) => (e.isDirectory() ? !WHOLE.has(e.name) && holdsModules(path.join(rel, e.name)) : isModule(e.name)));
  const modules = [];
  // A folder holding TypeScript becomes a real folder of links (its modules transpiled beside them), any other entry
  // one link.
  const mirror = (rel) => {
    fs.mkdirSync(path.join(out, rel), { recursive: true });
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (SKIP.has(r)) continue;
      if (e.isDirectory() && !WHOLE.has(e.name) && holdsModules(r)) {
        mirror(r);
        continue;
      }
      fs.symlinkSync(path.join(root, r), path.join(out, r));
      if (e.isFile() && isModule(e.name)) modules.push(path.join(root, r));
    }
  };
  fs.rmSync(out, { recursive: true, force: true });
  mirror('.');
  await build({
    entryPoints: modules,
    outdir: out,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    bundle: false,
    logLevel: 'warning',
  });
  return modules.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const n = await buildTestTree(ROOT, path.join(ROOT, '.test-build'));
  process.stdout.write(`test build: ${n} modules in .test-build/ (${Math.round(performance.now() - started)} ms)\n`);
}
