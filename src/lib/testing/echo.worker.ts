import { isMainThread } from 'node:worker_threads';

export function handle(input: { op: string; n?: number }): unknown {
  if (input.op === 'throw') throw new Error('boom');
  if (input.op === 'exit') process.exit(3);
  const n: number = (input.n ?? 0) + 1;
  return { n, main: isMainThread };
}
