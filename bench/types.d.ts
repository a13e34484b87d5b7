/** Minimal declarations for the untyped benchmark dependencies (autocannon, oidc-provider). */

declare module 'autocannon' {
  export interface Histogram {
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
    p99_9: number;
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    excludeErrorStats?: boolean;
    /** Hand back the run's raw result, without summarising its histograms. */
    skipAggregateResult?: boolean;
  }
  export interface Instance {
    stop(): void;
    /** Each answer, with the milliseconds (fractional) from its request's first byte sent. */
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}

declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    listen(port: number, host: string, callback?: () => void): import('node:http').Server;
    proxy: boolean;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
}
