// Load-generator child process. bench/run.ts forks it once and sends one job per scenario over IPC, so autocannon
// runs on its own event loop (and, scheduler permitting, its own core) instead of competing with the server's.
import autocannon, { type Options } from 'autocannon';
import { createBody } from './ab-create.js';

/** `create`: POST /v1/signing-requests bodies made here, one per request (ab-create.ts's createBody). */
export type LoadJob = { id: number; opts: Options; create?: boolean };
export type LoadReport = {
  id: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  maxLatency: number;
  total: number;
  warmupTotal: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  warmupNon2xx: number;
  warmupErrors: number;
  error?: string;
};

const codes = (s: Record<string, { count: number }> | undefined) =>
  Object.fromEntries(Object.entries(s ?? {}).map(([k, v]) => [k, Number(v.count)]));

const bodies = createBody();

process.on('message', async (job: LoadJob) => {
  if (job.create) {
    const body = await bodies;
    const { headers, ...rest } = job.opts;
    const request = {
      method: 'POST',
      path: '/v1/signing-requests',
      headers: { ...headers, 'content-type': 'application/json' },
      setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body() }),
    };
    job.opts = { ...rest, requests: [request] };
  }
  autocannon(job.opts).then(
    (r) => {
      const report: LoadReport = {
        id: job.id,
        rps: r.requests.average,
        p50: r.latency.p50,
        p90: r.latency.p90,
        p99: r.latency.p99,
        maxLatency: r.latency.max,
        total: r.requests.total,
        warmupTotal: r.warmup?.requests.total ?? 0,
        ok2xx: r['2xx'],
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        statusCodes: codes(r.statusCodeStats),
        warmupNon2xx: r.warmup?.non2xx ?? 0,
        warmupErrors: r.warmup?.errors ?? 0,
      };
      process.send!(report);
    },
    (err: unknown) => process.send!({ id: job.id, error: String((err as Error)?.message ?? err) }),
  );
});
process.on('disconnect', () => process.exit(0));
