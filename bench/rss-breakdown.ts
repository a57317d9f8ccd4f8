// Where the agent's memory goes: the RSS of a fresh Node process that imports one thing, after
// a full GC, against a bare Node process. Each line is its own process (plain JavaScript given
// with -e, so no TypeScript stripper is loaded), measured `runs` times; the median is kept.
//
// | line                        | what the process imports                                        |
// |-----------------------------|-----------------------------------------------------------------|
// | bare node                   | nothing                                                         |
// | node:http, two ways         | as an ES import (which loads Node's bundled undici), and as the  |
// |                             | agent takes it, process.getBuiltinModule (src/node-http.ts)     |
// | each dependency             | that package, the way the agent imports it (prom-client's four  |
// |                             | classes, not its index; yaml, which it loads only with a config |
// |                             | file), and what it leaves out, for comparison; client-node's    |
// |                             | KubeConfig (dist/config.js), which only fleet, the controller   |
// |                             | and an agent given a kubeconfig file load, for comparison;      |
// |                             | @grpc/grpc-js is the CRI client's transport                     |
// | proto-loader + the CRI proto| proto-loader, with proto/runtime/v1/api.proto loaded (what a    |
// |                             | PodSandboxStatus or ContainerStatus call pays, once; the agent  |
// |                             | makes neither)                                                  |
// | every agent module          | dist/src/cli/agent-command.js: everything `nodepulse agent` runs |
// | the same, bundled           | the agent command's chunk of the image's bundle, as the image   |
// |                             | loads it (given the bundle's folder)                            |
//
// The running agent's own RSS comes from the steady-state run, beside these lines.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runJsonChild } from './child-process.ts';

export interface RssLine {
  readonly what: string;
  readonly rssMiB: number;
  /** Over the bare Node process. */
  readonly deltaMiB: number;
}

const CHILD_TIMEOUT_MS = 30_000;
const MIB = 1024 * 1024;

const LINES: ReadonlyArray<{ what: string; code: string }> = [
  { what: 'bare node', code: '' },
  { what: 'node:http as an ES import', code: "await import('node:http');" },
  { what: "node:http by process.getBuiltinModule (the agent's way)", code: "process.getBuiltinModule('node:http');" },
  { what: "@grpc/grpc-js (the CRI client's transport)", code: "await import('@grpc/grpc-js');" },
  { what: '@grpc/proto-loader', code: "await import('@grpc/proto-loader');" },
  {
    what: '@grpc/proto-loader + the CRI proto loaded',
    code: "const l = await import('@grpc/proto-loader'); await l.load('runtime/v1/api.proto', { longs: String, enums: String, defaults: true, includeDirs: ['proto'] });",
  },
  { what: 'pino', code: "await import('pino');" },
  {
    what: "prom-client's Registry, Counter, Gauge and Histogram (the agent's way, src/metrics/prom-client.ts)",
    code: "for (const m of ['registry', 'counter', 'gauge', 'histogram']) await import(`prom-client/lib/${m}.js`);",
  },
  { what: 'prom-client, its index (not loaded by the agent)', code: "await import('prom-client');" },
  { what: '@opentelemetry/api (not loaded by the agent)', code: "await import('@opentelemetry/api');" },
  { what: 'yaml (loaded by the agent only with a config file)', code: "await import('yaml');" },
  { what: "zod/v3 (the config schema's import)", code: "await import('zod/v3');" },
  { what: "@kubernetes/client-node's KubeConfig (not loaded by the agent in a pod)", code: "await import('@kubernetes/client-node/dist/config.js');" },
  { what: 'every agent module (dist/src/cli/agent-command.js)', code: "await import('./dist/src/cli/agent-command.js');" },
];

function script(code: string): string {
  return `${code} globalThis.gc(); globalThis.gc(); process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss }) + '\\n');`;
}

async function measure(root: string, code: string, runs: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { rss } = await runJsonChild<{ rss: number }>(['--expose-gc', '--input-type=module', '-e', script(code)], CHILD_TIMEOUT_MS, root);
    samples.push(rss / MIB);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

/**
 * Every line above, then, given the folder of the image's bundle (scripts/bundle.ts), the chunk
 * of the agent command imported from it, as the image loads it.
 */
export async function runRssBreakdown(root: string, runs: number, bundleDir?: string): Promise<RssLine[]> {
  const lines: RssLine[] = [];
  let bare = 0;
  const all = [...LINES];
  if (bundleDir !== undefined) {
    const chunks = join(bundleDir, 'dist', 'chunks');
    const agent = readdirSync(chunks).find((f) => f.startsWith('agent-command-') && f.endsWith('.js'));
    if (agent === undefined) throw new Error(`${chunks} must hold the agent command's chunk (agent-command-*.js)`);
    all.push({ what: "every agent module, from the image's bundle (its agent-command chunk)", code: `await import(${JSON.stringify(pathToFileURL(join(chunks, agent)).href)});` });
  }
  for (const line of all) {
    const rssMiB = await measure(root, line.code, runs);
    if (line.code === '') bare = rssMiB;
    lines.push({ what: line.what, rssMiB, deltaMiB: rssMiB - bare });
  }
  return lines;
}
