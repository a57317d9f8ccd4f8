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
// Failure mode: a prom-client that moves these modules fails at start-up with the require error
// (the package pins the major version; test/package/agent-modules.test.ts runs the built agent).
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry.js') as typeof PromClient.Registry;
export const Counter = require('prom-client/lib/counter.js') as typeof PromClient.Counter;
export const Gauge = require('prom-client/lib/gauge.js') as typeof PromClient.Gauge;
export const Histogram = require('prom-client/lib/histogram.js') as typeof PromClient.Histogram;
export type Registry = PromClient.Registry;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
