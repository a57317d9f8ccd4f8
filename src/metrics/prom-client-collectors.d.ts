// Types for the prom-client modules src/metrics/event-loop-lag.ts imports one by one (prom-client
// types only its index): its default-metrics module, whose metricsList names the default
// collectors, and each collector, a CommonJS function that registers its families on the
// registry it is given.
declare module 'prom-client/lib/defaultMetrics.js' {
  const collectDefaultMetrics: { readonly metricsList: readonly string[] };
  export = collectDefaultMetrics;
}

declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client';
  const collect: (registry: Registry, config: object) => void;
  export = collect;
}
