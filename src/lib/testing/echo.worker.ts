import { isMainThread, threadId } from 'node:worker_threads';

export type EchoInput =
  | { op: 'echo'; n?: number }
  | { op: 'throw' }
  | { op: 'exit' }
  /** Busy-loops for `ms`, then reports which worker ran it and how many warm-ups that worker had run. */
  | { op: 'spin'; ms: number }
  /** Blocks its worker until `gate[0]` is set (at most 10 s), then reports like 'spin'. */
  | { op: 'hold'; gate: Int32Array }
  /** A warm-up: counted, then spins for `ms`; throws if `fail`. */
  | { op: 'warmup'; ms?: number; fail?: boolean };

let warmups = 0;

export function handle(input: EchoInput): unknown {
  switch (input.op) {
    case 'throw':
      throw new Error('boom');
    case 'exit':
      return process.exit(3);
    case 'spin':
      spin(input.ms);
      return { thread: threadId, warmups };
    case 'hold':
      Atomics.wait(input.gate, 0, 0, 10_000);
      return { thread: threadId, warmups };
    case 'warmup':
      warmups++;
      if (input.fail) throw new Error('warm-up broke');
      spin(input.ms ?? 0);
      return null;
    default:
      return { n: (input.n ?? 0) + 1, main: isMainThread };
  }
}

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}
