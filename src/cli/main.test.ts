// The `signet` process itself: a bad environment stops it with one line on stderr, whatever the command.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDataDir, oneErrorLine } from './testing/cli.js';

describe('signet CLI', () => {
  const cli = cliDataDir();
  const { signet } = cli;

  test('a bad environment value stops with exactly one clear line on stderr', async () => {
    const cases: Array<[Record<string, string>, string[], RegExp]> = [
      [{ PORT: 'abc' }, ['serve'], /PORT/],
      [{ PORT: 'abc' }, ['workspace', 'create', '--name', 'X', '--json'], /PORT/],
      [{ LOG_LEVEL: 'loud' }, ['serve'], /LOG_LEVEL/],
      [{ DATABASE_URL: 'mysql://db/signet' }, ['serve'], /DATABASE_URL/],
    ];
    const results = await Promise.all(cases.map(([env, args]) => signet(args, env)));
    results.forEach((r, i) => {
      const [env, args, mention] = cases[i]!;
      const label = `${JSON.stringify(env)} signet ${args[0]}`;
      assert.match(oneErrorLine(r, label), mention, label);
    });
  });
});
