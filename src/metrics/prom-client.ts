// prom-client's metric classes, taken from the modules that define them instead of from the
// package's index.
//
// Why: prom-client's index loads everything it offers: Summary (with tdigest), the Pushgateway
// (node:http, node:https, node:url), the cluster aggregator (node:cluster) and every default
// collector, among them processCpuTotal, which loads @opentelemetry/api for exemplars the agent
// never records. The agent uses a Registry, Counters, Gauges and Histograms only, and a module it
// loads stays resident on every node for the agent's life: docs/bench.md measures what the index
// costs over these four. The classes are the very ones the index exports (the same modules), so
// their types are taken from the package's declarations.
//
// Each is imported by name, so that a bundler sees the modules the agent runs (the image ships the
// agent bundled: scripts/bundle.ts); prom-client-collectors.d.ts types them as the index does.
//
// Failure mode: a prom-client that moves these modules fails at start-up with the import error
// (the package pins the major version; test/package/agent-modules.test.ts runs the built agent).
import type * as PromClient from 'prom-client';
import CounterClass from 'prom-client/lib/counter.js';
import GaugeClass from 'prom-client/lib/gauge.js';
import HistogramClass from 'prom-client/lib/histogram.js';
import RegistryClass from 'prom-client/lib/registry.js';

export const Registry = RegistryClass;
export const Counter = CounterClass;
export const Gauge = GaugeClass;
export const Histogram = HistogramClass;
export type Registry = PromClient.Registry;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
