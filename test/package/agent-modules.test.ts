// What the agent is made of, checked on the BUILT agent (dist/), as the package ships it: the
// libraries it must run on are loaded by a real run, and its source reaches the runtime only
// through them.
//
//   - A run of `nodepulse agent` from dist/, against the simulated runtime and the API stand-in,
//     under a module-load hook (test/support/module-load-hook.ts) that records every module the
//     process loads, until it has relisted and renewed its Lease. Every package of AGENT_LOADS
//     must be among them. @grpc/proto-loader must not: the relist path decodes with the lean
//     reader, and the full proto is loaded only by the rare calls the agent never makes. Nor
//     may any module of dist/src/stand-ins/ (the fence of src/README.md), the demo, or the
//     tests' manual clock: the agent ships to every node and runs on none of them.
//   - No module of src/ outside the stand-ins imports node:http2: the CRI client speaks gRPC
//     through @grpc/grpc-js, which owns the HTTP/2 connection.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { AGENT_MAIN, pollUntil, REPO_ROOT, startAgentProcess, startStandIn } from '../support/agent-process.ts';

/** Packages every run of the agent loads. Add a package here when the agent comes to run on it. */
const AGENT_LOADS = [
  '@grpc/grpc-js',
  'zod',
] as const;
/** Packages the agent must not load while it relists and renews. */
const AGENT_DOES_NOT_LOAD = ['@grpc/proto-loader'] as const;
/** Built modules (paths under dist/src/) a run of the agent must not load. */
function notForANode(path: string): boolean {
  return path.startsWith('stand-ins/') || path.startsWith('demo/') || path === 'cli/demo-command.js' || path === 'clock/manual-clock.js';
}
/** The stand-ins may speak HTTP/2 themselves; nothing else in src/ may. */
const HTTP2_ALLOWED = ['src/stand-ins/api-server/', 'src/stand-ins/cri-runtime/'];
const NODE = 'node-agent-modules';
const RUN_BOUND_MS = 15_000;
const HOOK = join(REPO_ROOT, 'test', 'support', 'module-load-hook.ts');

/** The package a loaded module's URL belongs to (after its last node_modules/), or undefined. */
function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const [first = '', second = ''] = url.slice(at + '/node_modules/'.length).split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)));
}

describe('what the agent runs on', () => {
  test('packageOf names the package of a module URL, scoped or not, nested or not', () => {
    assert.equal(packageOf('file:///r/node_modules/@grpc/grpc-js/build/src/index.js'), '@grpc/grpc-js');
    assert.equal(packageOf('file:///r/node_modules/pino/pino.js'), 'pino');
    assert.equal(packageOf('file:///r/node_modules/a/node_modules/@scope/b/x.js'), '@scope/b');
    assert.equal(packageOf('file:///r/dist/src/cli/main.js'), undefined);
    assert.equal(packageOf('node:http2'), undefined);
  });

  test('a run of the built agent loads every package it runs on, not proto-loader, and no stand-in', { timeout: 60_000 }, async (t) => {
    assert.ok(existsSync(AGENT_MAIN), 'precondition: the agent is built (npm test builds it first)');
    const standIn = await startStandIn(t, { nodeName: NODE });
    const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 2, containersPerPod: 2 });
    t.after(() => sim.close());
    const log = join(standIn.dir, 'modules.log');
    const agent = await startAgentProcess(t, {
      args: ['--node-name', NODE, '--cri-endpoint', sim.endpoint, '--kubeconfig', standIn.kubeconfig],
      nodeArgs: ['--import', HOOK],
      env: { MODULE_LOAD_LOG: log },
    });
    await pollUntil('the agent to relist and renew its Lease', () => standIn.lease()?.spec.renewTime, { timeoutMs: RUN_BOUND_MS });
    assert.ok((sim.calls().received['ListContainers'] ?? 0) >= 1, 'precondition: the agent relisted');
    await agent.stop();

    const urls = readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
    const mainUrl = `file://${AGENT_MAIN}`;
    assert.ok(urls.includes(mainUrl), `precondition: the hook saw the built agent's main (${mainUrl}) among ${urls.length} modules`);
    assert.deepEqual(urls.filter((u) => u.startsWith(`file://${join(REPO_ROOT, 'src')}/`)), [], 'precondition: the agent ran from dist/, not from the TypeScript sources');
    const loaded = new Set(urls.map(packageOf).filter((p) => p !== undefined));
    for (const name of AGENT_LOADS) assert.ok(loaded.has(name), `the agent loads ${name} (loaded: ${[...loaded].sort().join(', ')})`);
    for (const name of AGENT_DOES_NOT_LOAD) assert.ok(!loaded.has(name), `the agent does not load ${name} to relist and renew`);
    const distSrc = `file://${join(REPO_ROOT, 'dist', 'src')}/`;
    const own = urls.filter((u) => u.startsWith(distSrc)).map((u) => u.slice(distSrc.length));
    for (const path of ['cri/runtime-client.js', 'lease/node-lease.js']) assert.ok(own.includes(path), `precondition: the hook recorded the agent's own ${path}`);
    assert.ok(existsSync(join(REPO_ROOT, 'dist', 'src', 'stand-ins', 'api-server', 'api-server.js')), 'precondition: the stand-ins are built beside the agent, so loading one would show');
    assert.deepEqual(own.filter(notForANode), [], 'the agent loads no stand-in, no demo and not the tests\' clock');
  });

  test('no module of src/ outside the stand-ins imports node:http2', () => {
    const files = sourceFiles(join(REPO_ROOT, 'src'));
    assert.ok(files.length > 50, `precondition: src/ has its modules (${files.length})`);
    const importsHttp2 = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|getBuiltinModule\s*\(\s*)['"](?:node:)?http2['"]/;
    const found = files.filter((f) => !HTTP2_ALLOWED.some((dir) => f.startsWith(dir)) && importsHttp2.test(readFileSync(join(REPO_ROOT, f), 'utf8')));
    assert.deepEqual(found, []);
    assert.ok(importsHttp2.test("import * as http2 from 'node:http2';") && importsHttp2.test("await import('http2')"), 'precondition: the pattern sees an import');
  });
});
