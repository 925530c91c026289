#!/usr/bin/env node
// The `signet` command. It runs the compiled JavaScript in dist/, building it first when the sources changed since
// (scripts/build.mjs; well under a second), so a fresh clone and an edited checkout both start right.
// SIGNET_FROM_SOURCE=1 runs the TypeScript through tsx instead (slower to start; for debugging).
if (process.env.SIGNET_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
} else {
  const { ensureBuilt } = await import('../scripts/build.mjs');
  await import((await ensureBuilt('cli/main')).href);
}
