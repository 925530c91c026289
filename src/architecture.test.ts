// The rules ARCHITECTURE.md states about the tree, checked on the code's own imports and text. Test files and
// `testing/` helpers are outside the import rules (they may reach anywhere) but not outside the size rule. A new
// top-level folder fails here until it is given a layer.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');

/** Each top-level folder (and root file) of src/ and its layer; arrows point down this list. */
const LAYERS = {
  top: ['main.ts', 'runtime.ts', 'app.ts', 'cli'],
  feature: [
    'signing',
    'templates',
    'embedded',
    'dashboard',
    'webhooks',
    'docs',
    'workspaces',
    'idempotency',
    'verification',
    'qes',
    'backup',
    'secrets',
  ],
  gate: ['http'],
  infrastructure: [
    ...['lib', 'db', 'jobs', 'pki', 'documents', 'mail', 'sms', 'keys', 'ratelimit', 'web', 'i18n', 'audit'],
    ...['config.ts', 'limits.ts'],
  ],
} as const;
type Layer = keyof typeof LAYERS;
const layerOf = new Map<string, Layer>(
  Object.entries(LAYERS).flatMap(([layer, names]) => names.map((n) => [n, layer as Layer] as const)),
);
/** What each layer may import besides its own folder. */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  top: ['top', 'feature', 'gate', 'infrastructure'],
  feature: ['feature', 'gate', 'infrastructure'],
  gate: ['infrastructure'],
  infrastructure: ['infrastructure'],
};
const MAX_LINES = 400;
const SIGNER_PAGE = 'signing/page/signer-page.ts';

/** A source file of src/: its path from src/ (with /), its text, and the src/ files it imports. */
type Source = { rel: string; text: string; imports: string[] };

/** `text` as the file `rel` of src/: what it imports, resolved to src/ paths. */
function parse(rel: string, text: string): Source {
  const dir = path.dirname(path.join(SRC, rel));
  const imports = ts
    .preProcessFile(text, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((f) => f.startsWith('.'))
    .map((f) => toRel(path.resolve(dir, f)).replace(/\.js$/, '.ts'));
  return { rel, text, imports };
}
const read = (abs: string): Source => parse(toRel(abs), fs.readFileSync(abs, 'utf8'));
const toRel = (abs: string) => path.relative(SRC, abs).split(path.sep).join('/');
const isTest = (rel: string) => /\.test\.ts$/.test(rel) || rel.split('/').includes('testing');

function walk(dir: string, keep: (abs: string) => boolean, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!['node_modules', 'dist', 'generated'].includes(e.name)) walk(abs, keep, out);
    } else if (keep(abs)) out.push(abs);
  }
  return out;
}

const topOf = (rel: string) => rel.split('/')[0]!;

/** Folder-level arrows ("a -> b"), each with the file imports behind it. */
function arrowsOf(files: readonly Source[]): Map<string, string[]> {
  const arrows = new Map<string, string[]>();
  for (const f of files)
    for (const target of f.imports) {
      const [a, b] = [topOf(f.rel), topOf(target)];
      if (a === b) continue;
      const key = `${a} -> ${b}`;
      arrows.set(key, [...(arrows.get(key) ?? []), `${f.rel} imports ${target}`]);
    }
  return arrows;
}

const rules = {
  unplaced: (files: readonly Source[]) => [...new Set(files.map((f) => topOf(f.rel)))].filter((t) => !layerOf.has(t)),

  twoWayPairs(files: readonly Source[]): string[] {
    const arrows = arrowsOf(files);
    return [...arrows.keys()]
      .map((k) => k.split(' -> ') as [string, string])
      .filter(([a, b]) => a < b && arrows.has(`${b} -> ${a}`))
      .map(([a, b]) => `${a} <-> ${b}: ${[...arrows.get(`${a} -> ${b}`)!, ...arrows.get(`${b} -> ${a}`)!].join('; ')}`);
  },

  upwardArrows(files: readonly Source[]): string[] {
    return [...arrowsOf(files).entries()]
      .filter(([k]) => {
        const [a, b] = k.split(' -> ') as [string, string];
        const [la, lb] = [layerOf.get(a), layerOf.get(b)];
        return la !== undefined && lb !== undefined && !MAY_IMPORT[la].includes(lb);
      })
      .map(([k, why]) => `${k}: ${why.join('; ')}`);
  },

  sqlOutsideRepos: (files: readonly Source[]) =>
    files
      .filter(
        (f) =>
          /\.(selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\(|\bsql(<[^>]*>)?`/.test(f.text) &&
          !f.rel.endsWith('.repo.ts') &&
          topOf(f.rel) !== 'db' &&
          f.rel !== 'documents/blob-store.ts',
      )
      .map((f) => f.rel),

  dialectBranches: (files: readonly Source[]) =>
    files.filter((f) => topOf(f.rel) !== 'db' && /\.dialect\b/.test(f.text)).map((f) => f.rel),

  signerPageImporters: (files: readonly Source[]) =>
    files
      .filter((f) => f.imports.includes(SIGNER_PAGE) && !['signing', 'embedded'].includes(topOf(f.rel)))
      .map((f) => f.rel),

  oversized: (files: readonly { rel: string; text: string }[]) =>
    files
      .map((f) => ({ rel: f.rel, lines: f.text.split('\n').length - (f.text.endsWith('\n') ? 1 : 0) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.rel}: ${f.lines} lines`),
};

const ALL = walk(SRC, (abs) => abs.endsWith('.ts') && !abs.endsWith('.d.ts')).map(read);
/** What the import and SQL rules judge: the product's code, without tests and test helpers. */
const CODE = ALL.filter((f) => !isTest(f.rel));

describe('the tree keeps ARCHITECTURE.md’s rules', () => {
  test('every top-level folder and root file of src/ has a layer', () => {
    assert.deepEqual(rules.unplaced(CODE), [], 'give each a layer in LAYERS (and a line in ARCHITECTURE.md)');
  });

  test('no two folders import each other', () => {
    assert.deepEqual(rules.twoWayPairs(CODE), []);
  });

  test('arrows point down: infrastructure imports no gate, feature or top; the gate no feature', () => {
    assert.deepEqual(rules.upwardArrows(CODE), []);
  });

  test('SQL is written only in *.repo.ts files, the blob store and db/', () => {
    assert.deepEqual(rules.sqlOutsideRepos(CODE), []);
  });

  test('only db/ branches on the database dialect', () => {
    assert.deepEqual(rules.dialectBranches(CODE), []);
  });

  test('only signing/ and embedded/ import the signer page', () => {
    assert.deepEqual(rules.signerPageImporters(CODE), []);
  });

  test(`no hand-written TypeScript file is over ${MAX_LINES} lines (tests, SDK, bench and cluster included)`, () => {
    const elsewhere = ['sdk', 'bench', 'cluster', 'scripts'].flatMap((d) =>
      walk(path.join(ROOT, d), (abs) => /\.m?ts$/.test(abs)).map((abs) => ({
        rel: path.relative(ROOT, abs),
        text: fs.readFileSync(abs, 'utf8'),
      })),
    );
    assert.deepEqual(rules.oversized([...ALL.map((f) => ({ ...f, rel: `src/${f.rel}` })), ...elsewhere]), []);
  });
});

describe('the rules find what they forbid', () => {
  // Made-up sources, so a broken parser or pattern (nothing found, everything passing) fails here.
  const src = parse;

  test('the real tree is read: its known arrows are there', () => {
    const arrows = arrowsOf(CODE);
    assert.ok(arrows.has('signing -> documents'), 'signing imports documents');
    assert.ok(arrows.has('app.ts -> web'), 'app.ts imports web');
    assert.ok(CODE.length > 100, `only ${CODE.length} files read`);
  });

  test('a two-way pair, an upward arrow, a query, a dialect branch, a page import and a long file', () => {
    const files = [
      src('mail/outbox.ts', "import { x } from '../signing/open.js';"),
      src('signing/open.ts', "import { y } from '../mail/outbox.js';\nawait db.selectFrom('documents');"),
      src('documents/blob-store.ts', 'if (db.dialect === "postgres") {}'),
      src('templates/review/page.ts', "import { p } from '../../signing/page/signer-page.js';"),
      src('gadgets/thing.ts', ''),
    ];
    assert.deepEqual(rules.unplaced(files), ['gadgets']);
    assert.equal(rules.twoWayPairs(files).length, 1, 'mail <-> signing');
    assert.deepEqual(
      rules.upwardArrows(files).map((a) => a.split(':')[0]),
      ['mail -> signing'],
    );
    assert.deepEqual(rules.sqlOutsideRepos(files), ['signing/open.ts']);
    assert.deepEqual(rules.dialectBranches(files), ['documents/blob-store.ts']);
    assert.deepEqual(rules.signerPageImporters(files), ['templates/review/page.ts']);
    assert.deepEqual(rules.oversized([{ rel: 'long.ts', text: 'x\n'.repeat(MAX_LINES + 1) }]), ['long.ts: 401 lines']);
    assert.deepEqual(rules.oversized([{ rel: 'ok.ts', text: 'x\n'.repeat(MAX_LINES) }]), []);
  });
});
