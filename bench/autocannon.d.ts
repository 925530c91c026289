// Minimal typing for the parts of autocannon 8's programmatic API the benchmark uses (the package ships none).
declare module 'autocannon' {
  type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  };
  export type Result = {
    url: string;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    warmup?: Result;
  };
  export type Options = {
    url: string;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    connections?: number;
    duration?: number;
    pipelining?: number;
    /** Requests per second across all connections (a fixed-rate load instead of as fast as possible). */
    overallRate?: number;
    warmup?: { connections?: number; duration?: number };
    requests?: Array<{
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (req: Record<string, unknown>) => Record<string, unknown>;
    }>;
  };
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
