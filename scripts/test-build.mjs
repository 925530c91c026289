// The tree the test suite runs from (scripts/test.sh): `.test-build/`, the repository with every TypeScript module
// (tests and test helpers included) transpiled by esbuild to JavaScript in the same place, and
// everything else a symbolic link to the original. Node then loads plain JavaScript: under tsx every test process
// spent 1–3 s of CPU more on loading (its hooks run on a thread of their own and see every import), about a third of
// the suite's machine time on two cores. Paths taken relative to a module hold in both trees: the .ts sources, pages'
// assets, views and fixtures sit beside the .js files as links, and the root's files (bin/, dist/, node_modules/, …)
// are links one level up. Rebuilt whole on every run (a few seconds), so it is never stale.
//
// Then each test is bundled with everything it imports into `.test-build/.run/` (bundleTests): loading some 1,300
// files one by one cost every test process 1.3 s of wall time and 1.7 s of CPU before its first test, and the suite
// starts over 200 of them. The bundles keep what a module sees of its own place: `import.meta.url`, `dirname` and
// `filename` and a package's `__dirname` and `__filename` are its file's in the tree above, so assets, fixtures,
// workers and children are found where they were. Native addons, the browser driver and packages a module imports
// at run time stay outside, loaded by Node as before.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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

/** Packages never bundled: native addons, the browser driver (it spawns from its own files), build tools. */
const EXTERNAL = ['better-sqlite3', 'pg-native', 'playwright-core', 'esbuild', 'tsx', 'fsevents'];
const declares = (src, name) => new RegExp(`(?:const|let|var|function)\\s+${name}\\b`).test(src);

// Each module's own place, as it would have seen it unbundled: import.meta's fields become names declared at the
// top of the module (esbuild's `define` rewrites the expressions, never the text inside strings), and CommonJS
// modules that read __dirname or __filename get their own.
const ownPlace = {
  name: 'own-place',
  setup(b) {
    // A package imported at run time stays a package: Node's own interop, as unbundled.
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined,
    );
    b.onLoad({ filter: /\.(m?js|cjs)$/ }, async (args) => {
      const src = await fs.promises.readFile(args.path, 'utf8');
      const dir = path.dirname(args.path);
      let head = '';
      if (src.includes('import.meta'))
        head += `const __metaUrl = ${JSON.stringify(pathToFileURL(args.path).href)}, __metaDirname = ${JSON.stringify(dir)}, __metaFilename = ${JSON.stringify(args.path)};`;
      if (src.includes('__dirname') && !declares(src, '__dirname')) head += `var __dirname = ${JSON.stringify(dir)};`;
      if (src.includes('__filename') && !declares(src, '__filename'))
        head += `var __filename = ${JSON.stringify(args.path)};`;
      return { contents: head + src, loader: 'js', resolveDir: dir };
    });
  },
};

const bundling = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  define: {
    'import.meta.url': '__metaUrl',
    'import.meta.dirname': '__metaDirname',
    'import.meta.filename': '__metaFilename',
  },
  // A bundled CommonJS package that calls require() at run time finds node_modules from the chunk's folder.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  plugins: [ownPlace],
  logLevel: 'warning',
};

/**
 * Bundles the tests (paths in `out`) into `out/.run/` at the same relative paths, with shared chunks beside them,
 * and each worker thread's entry (`*.worker.js`, which pools load by path) in place, whole: a PDF worker took 0.6 s
 * to start, one module at a time.
 */
export async function bundleTests(out, tests) {
  const run = path.join(out, '.run');
  fs.rmSync(run, { recursive: true, force: true });
  await build({ ...bundling, entryPoints: tests, outdir: run, outbase: out, splitting: true });
  for (const w of filesEnding(out, ['src'], '.worker.js')) {
    const r = await build({ ...bundling, entryPoints: [w], outfile: w, write: false, allowOverwrite: true });
    fs.writeFileSync(w, r.outputFiles[0].contents);
  }
  return tests.map((t) => path.join(run, path.relative(out, t)));
}

/** Files under `dirs` of the tree at `out` whose names end in `suffix`, sorted. */
const filesEnding = (out, dirs, suffix) =>
  dirs
    .filter((d) => fs.existsSync(path.join(out, d)))
    .flatMap((d) => fs.readdirSync(path.join(out, d), { recursive: true }).map((f) => path.join(out, d, f)))
    .filter((f) => f.endsWith(suffix))
    .sort();

/** The test files of the tree at `out`, as the suite names them. */
export const testsOf = (out) => filesEnding(out, ['src', 'sdk/test'], '.test.js');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const out = path.join(ROOT, '.test-build');
  const n = await buildTestTree(ROOT, out);
  const tests = await bundleTests(out, testsOf(out));
  process.stdout.write(
    `test build: ${n} modules in .test-build/, ${tests.length} tests bundled in .test-build/.run/ (${Math.round(performance.now() - started)} ms)\n`,
  );
}
