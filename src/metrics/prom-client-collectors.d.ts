// Types for the prom-client modules the agent imports one by one (prom-client types only its
// index): the four metric classes (src/metrics/prom-client.ts), each the very class the index
// exports; its default-metrics module, whose metricsList names the default collectors (read by
// the tests only); and each collector (src/metrics/event-loop-lag.ts), a CommonJS function that
// registers its families on the registry it is given.
declare module 'prom-client/lib/registry.js' {
  import { Registry } from 'prom-client';
  export = Registry;
}

declare module 'prom-client/lib/counter.js' {
  import { Counter } from 'prom-client';
  export = Counter;
}

declare module 'prom-client/lib/gauge.js' {
  import { Gauge } from 'prom-client';
  export = Gauge;
}

declare module 'prom-client/lib/histogram.js' {
  import { Histogram } from 'prom-client';
  export = Histogram;
}

declare module 'prom-client/lib/defaultMetrics.js' {
  const collectDefaultMetrics: { readonly metricsList: readonly string[] };
  export = collectDefaultMetrics;
}

declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client';
  const collect: (registry: Registry, config: object) => void;
  export = collect;
}
