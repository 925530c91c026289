// The build: every source module of src/ (tests and test helpers left out) transpiled by esbuild to dist/, one file
// per module in the same place, and every other file (pages' scripts and styles, views) copied beside it, so paths
// taken relative to a module hold in both trees. Plain JavaScript, so that it runs before anything is compiled.
// The dependencies that ship as hundreds of small ES modules (VENDORED) are bundled into dist/.vendor/ and our
// modules import them from there: Node loading typebox's 679 files and kysely's 262 one by one was about half of
// every `signet` command's start (BENCHMARKS.md, "the CLI's start").
//
// `node scripts/build.mjs` builds; bin/signet.js calls ensureBuilt() on every start. Guarantees:
// - dist/ is used only while its stamp matches the fingerprint of the sources (paths, sizes, modification times):
//   an edited checkout is rebuilt on the next start, never run stale, and so is one whose vendored packages changed
//   version (their package.json is in the fingerprint);
// - one process builds at a time (an exclusive lock file; a lock whose process is gone is taken over), and the stamp
//   is written last, so a process that finds a matching stamp finds every file of that build.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LOCK_WAIT_MS = 120_000;
const isModule = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts');
const THIS_FILE = fs.readFileSync(fileURLToPath(import.meta.url));
const VENDORED = ['kysely', 'typebox'];
// A bare import of a vendored package or one of its subpaths, as esbuild writes it: `from "typebox/value"`,
// `import "kysely"`, `import("kysely")`.
const VENDOR_IMPORT = new RegExp(
  `(\\bfrom\\s*|\\bimport\\s*\\(?\\s*)"((?:${VENDORED.join('|')})(?:/[\\w./-]+)?)"`,
  'g',
);
const vendorName = (specifier) => specifier.replace(/\//g, '-');

/** The text of a vendored package's package.json as installed here, or null. */
function packageJsonOf(pkg) {
  try {
    return fs.readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8');
  } catch {
    return null;
  }
}

/** The build of the tree at `root` (its src/ into its dist/); tests use their own trees. */
export function builder(root) {
  const SRC = path.join(root, 'src');
  const DIST = path.join(root, 'dist');
  const STAMP = path.join(DIST, '.stamp');
  const LOCK = path.join(root, '.dist.lock');

  /** Sources that go into dist/: no tests, no test helpers. */
  function sources() {
    const out = [];
    const walk = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== 'testing') walk(p);
        } else if (!/\.test\.ts$/.test(e.name)) out.push(p);
      }
    };
    walk(SRC);
    return out.sort();
  }

  function fingerprint(files) {
    const h = createHash('sha256');
    for (const f of files) {
      const st = fs.statSync(f);
      h.update(`${path.relative(SRC, f)}\0${st.size}\0${st.mtimeMs}\n`);
    }
    // The build itself is an input: a changed transpile setting must rebuild.
    h.update(THIS_FILE);
    for (const pkg of VENDORED) h.update(packageJsonOf(pkg) ?? `${pkg}: none\n`);
    return h.digest('hex');
  }

  const stampOf = () => {
    try {
      return fs.readFileSync(STAMP, 'utf8');
    } catch {
      return null;
    }
  };

  async function build() {
    const files = sources();
    const print = fingerprint(files);
    const { build: esbuild } = await import('esbuild');
    fs.rmSync(STAMP, { force: true });
    const modules = files.filter(isModule);
    const { outputFiles } = await esbuild({
      entryPoints: modules,
      outdir: DIST,
      outbase: SRC,
      format: 'esm',
      platform: 'node',
      target: 'node20.19',
      bundle: false,
      write: false,
      logLevel: 'warning',
    });
    const used = new Set();
    for (const o of outputFiles) for (const m of o.text.matchAll(VENDOR_IMPORT)) used.add(m[2]);
    const written = new Set();
    if (used.size > 0) {
      // One bundle per imported specifier, their common code in shared chunks: a package's subpaths keep sharing its
      // internals, as they do in node_modules.
      const vendor = await esbuild({
        entryPoints: Object.fromEntries([...used].map((s) => [vendorName(s), s])),
        outdir: path.join(DIST, '.vendor'),
        absWorkingDir: root,
        nodePaths: [path.join(root, 'node_modules'), path.join(ROOT, 'node_modules')],
        format: 'esm',
        platform: 'node',
        target: 'node20.19',
        bundle: true,
        splitting: true,
        metafile: true,
        logLevel: 'warning',
      });
      for (const out of Object.keys(vendor.metafile.outputs)) written.add(path.resolve(root, out));
    }
    for (const o of outputFiles) {
      // An import specifier takes forward slashes whatever the platform's separator.
      const rel = path.relative(path.dirname(o.path), path.join(DIST, '.vendor')).split(path.sep).join('/');
      const text = o.text.replace(VENDOR_IMPORT, (_, lead, s) => `${lead}"./${rel}/${vendorName(s)}.js"`);
      fs.mkdirSync(path.dirname(o.path), { recursive: true });
      fs.writeFileSync(o.path, text);
      written.add(o.path);
    }
    for (const f of files.filter((f) => !isModule(f))) {
      const to = path.join(DIST, path.relative(SRC, f));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(f, to);
      written.add(to);
    }
    // Outputs of sources that no longer exist would otherwise still be importable.
    const prune = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          prune(p);
          if (fs.readdirSync(p).length === 0) fs.rmdirSync(p);
        } else if (!written.has(p)) fs.rmSync(p);
      }
    };
    prune(DIST);
    fs.writeFileSync(STAMP, print);
    return { modules: modules.length, files: files.length };
  }

  function takeLock() {
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder;
      try {
        holder = Number(fs.readFileSync(LOCK, 'utf8'));
      } catch (e) {
        if (e.code === 'ENOENT') return takeLock(); // released between the two calls
        throw e;
      }
      try {
        if (holder > 0) process.kill(holder, 0);
        return false;
      } catch {
        fs.rmSync(LOCK, { force: true }); // its builder died
        return takeLock();
      }
    }
  }

  async function withLock(fn) {
    const deadline = Date.now() + LOCK_WAIT_MS;
    while (!takeLock()) {
      if (Date.now() > deadline) throw new Error(`signet: waited ${LOCK_WAIT_MS / 1000} s for ${LOCK}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      return await fn();
    } finally {
      fs.rmSync(LOCK, { force: true });
    }
  }

  return {
    /** Builds now (under the lock). */
    build: () => withLock(build),
    /**
     * The URL of dist/'s module for `src/<rel>` (rel without extension), building first when dist/ is missing or
     * was built from other sources; `built` says whether this call built.
     */
    async ensureBuilt(rel) {
      const url = pathToFileURL(path.join(DIST, `${rel}.js`));
      if (stampOf() === fingerprint(sources())) return { url, built: false };
      // Another process may have built while this one waited for the lock.
      const built = await withLock(async () => {
        if (stampOf() === fingerprint(sources())) return false;
        await build();
        return true;
      });
      return { url, built };
    },
  };
}

/** This checkout's build (bin/signet.js). */
export const ensureBuilt = async (rel) => (await builder(ROOT).ensureBuilt(rel)).url;

/** `--sdk`: the SDK workspace too (tsc), when TypeScript is installed; an install without dev dependencies has none. */
function buildSdk() {
  try {
    createRequire(import.meta.url).resolve('typescript');
  } catch {
    console.log(
      'sdk/: not built (TypeScript is a dev dependency; run `npm run build -w @signet/sdk` where it is installed)',
    );
    return;
  }
  const r = spawnSync('npm', ['run', '--silent', 'build', '-w', '@signet/sdk'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  console.log('built sdk/dist/');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  const r = await builder(ROOT).build();
  console.log(
    `built dist/: ${r.modules} modules and ${r.files - r.modules} other files in ${(performance.now() - t0).toFixed(0)} ms`,
  );
  if (process.argv.includes('--sdk')) buildSdk();
}
