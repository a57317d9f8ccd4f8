// The README's test command ends here: it runs every test file with node's own runner.
//
// Unit tests sit next to the code they test (src/**/*.test.ts). Tests that need real parts
// (containerd, promtool, kubectl, a spawned agent) live under test/. Under CI=true a missing real
// part fails its test instead of skipping it (see test/support/require.ts).
//
// Three phases, each only when a file given (or found) belongs to it:
//   1. every file outside test/cluster/, two at a time;
//   2. the files of test/cluster/ named lifecycle-*.test.ts, one at a time: each brings up a test
//      cluster of its own and takes it down (so no other cluster may be up meanwhile);
//   3. the other files of test/cluster/, one at a time (the fault tests, fault-*.test.ts and
//      rollout*.test.ts, last), against one shared cluster brought up
//      here (SHARED_CLUSTER_ARGS) and taken down at the end, also after a failure or an
//      interrupt. A cluster that is already up (`npm run cluster -- up` by hand) is used as it is,
//      and left up, except under CI=true, where the run tests this checkout's cluster and so takes
//      down any it finds first. What a dead cluster left (a killed run's state file, cgroups, its
//      bridge) is always taken down first, since it holds the machine's one cluster slot. A
//      control plane running in the cluster's cgroup that this checkout's folder does not record
//      (another NODEPULSE_CLUSTER_DIR's, or an `up` still starting) is someone else's: it is
//      never taken down from here, and the cluster files then skip (fail under CI=true), naming
//      it.
// The cluster's parts are checked first (test/cluster/requirements.ts): under CI=true a missing
// one, or an `up` that fails, fails the run; outside CI the cluster files are still run, and skip
// with the reason (NODEPULSE_CLUSTER_UNAVAILABLE).
//
// Each phase's wall time is printed when it ends.
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import { basename } from 'node:path';
import { SystemClock } from '../src/clock/clock.ts';
import { controlPlaneOfAnother, leftovers, readState } from './cluster/cluster.ts';
import { isRunning } from './cluster/daemon.ts';
import { CGROUP_ROOT, SHARED_CLUSTER_ARGS, clusterDir } from './cluster/layout.ts';
import { missingForCluster } from './cluster/requirements.ts';

const CLUSTER_DIR = 'test/cluster/';

const clock = new SystemClock();
const patterns = process.argv.slice(2);
const files = (patterns.length > 0 ? patterns : ['src/**/*.test.ts', 'test/**/*.test.ts'])
  .flatMap((p) => globSync(p))
  .sort();

if (files.length === 0) {
  console.error(`test/run.ts: no test files match ${JSON.stringify(patterns)}`);
  process.exit(1);
}

const inCluster = (f: string): boolean => f.startsWith(CLUSTER_DIR);
const isLifecycle = (f: string): boolean => inCluster(f) && basename(f).startsWith('lifecycle-');
const isFault = (f: string): boolean => inCluster(f) && /^(fault-|rollout)/.test(basename(f));
const phases = {
  others: files.filter((f) => !inCluster(f)),
  lifecycle: files.filter(isLifecycle),
  // The fault tests last: they restore every node they fault, but a failed restore must not
  // cost the install tests their cluster.
  shared: [...files.filter((f) => inCluster(f) && !isLifecycle(f) && !isFault(f)), ...files.filter(isFault)],
};

/** The running child, so an interrupt can wait for it before taking the cluster down. */
let current: ReturnType<typeof spawn> | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    current?.kill(signal);
  });
}

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: 'inherit', env });
    current = child;
    child.on('error', (err) => {
      console.error(`test/run.ts: ${file}: ${err.message}`);
      resolve(1);
    });
    child.on('close', (code, signal) => {
      current = undefined;
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}

function nodeTest(list: readonly string[], concurrency: number, env?: NodeJS.ProcessEnv): Promise<number> {
  return run(process.execPath, ['--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...list], env);
}

function cluster(args: readonly string[]): Promise<number> {
  return run(process.execPath, ['test/cluster/cli.ts', ...args]);
}

async function phase(name: string, body: () => Promise<number>): Promise<number> {
  const started = clock.monotonicMs();
  const status = await body();
  console.log(`test/run.ts: phase "${name}" took ${((clock.monotonicMs() - started) / 1000).toFixed(1)} s (exit ${status})`);
  return status;
}

let status = 0;
if (phases.others.length > 0) status = Math.max(status, await phase('tests', () => nodeTest(phases.others, 2)));

if (phases.lifecycle.length + phases.shared.length > 0 && !interrupted) {
  const missing = missingForCluster();
  const ci = process.env['CI'] === 'true';
  let unavailable: string | undefined;
  if (missing.length > 0) {
    unavailable = `the test cluster cannot come up here: missing ${missing.join('; ')}`;
    console.error(`test/run.ts: ${unavailable}`);
    if (ci) status = 1;
  }
  const env = { ...process.env, ...(unavailable === undefined ? {} : { NODEPULSE_CLUSTER_UNAVAILABLE: unavailable }) };

  // Someone else's running control plane (see the header): never taken down from here.
  const found = readState();
  const held = controlPlaneOfAnother(found);
  if (held.length > 0 && unavailable === undefined) {
    unavailable = `the machine's one test cluster slot is held by a running cluster that ${clusterDir()} does not record (${held.join(', ')} in cgroup ${CGROUP_ROOT}); it is left running`;
    console.error(`test/run.ts: ${unavailable}`);
    env['NODEPULSE_CLUSTER_UNAVAILABLE'] = unavailable;
    if (ci) status = 1;
  }
  const dead = held.length > 0 ? false : found === undefined ? leftovers().length > 0 : !found.daemons.every(isRunning);
  if (dead || (ci && found !== undefined && held.length === 0)) {
    const why = dead ? 'what a cluster no longer running left behind' : 'the test cluster already up (under CI=true this checkout brings up its own)';
    console.log(`test/run.ts: taking down ${why}`);
    const down = await phase('cluster down (before)', () => cluster(['down']));
    if (down !== 0) status = 1;
  }

  if (phases.lifecycle.length > 0 && !interrupted) {
    status = Math.max(status, await phase('cluster lifecycle tests', () => nodeTest(phases.lifecycle, 1, env)));
  }
  if (phases.shared.length > 0 && !interrupted) {
    const reuse = readState() !== undefined && held.length === 0;
    let ours = false;
    if (reuse) {
      console.log('test/run.ts: a test cluster is already up; the cluster tests use it and leave it up');
    } else if (unavailable === undefined) {
      const up = await phase('cluster up', () => cluster(['up', ...SHARED_CLUSTER_ARGS]));
      ours = readState() !== undefined;
      if (up !== 0) {
        status = 1;
        env['NODEPULSE_CLUSTER_UNAVAILABLE'] = `npm run cluster -- up failed (exit ${up}); its output is above`;
      }
    }
    try {
      if (!interrupted) status = Math.max(status, await phase('cluster tests', () => nodeTest(phases.shared, 1, env)));
    } finally {
      if (ours) {
        const down = await phase('cluster down', () => cluster(['down']));
        if (down !== 0) status = Math.max(status, 1);
      }
    }
  }
}
process.exit(interrupted ? Math.max(status, 130) : status);
