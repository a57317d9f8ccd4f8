// The arm64 image, built here without emulation (scripts/build-image.ts), smoke-tested by
// running its own files under qemu-user: Debian's qemu-aarch64-static, invoked directly with
// `-L <the image's unpacked root>` (binfmt_misc is absent here, so nothing runs an arm64 binary
// by itself). The interpreter, libc and libstdc++ the arm64 node loads are the image's own:
// qemu looks for them under -L first, and this amd64 machine has no arm64 libraries of its own
// to fall back on.
//
// What must hold: the node in the image is an AArch64 binary and the build's Node.js release;
// every command its CLI lists answers; and `check` relists the simulated runtime over its socket
// (real gRPC from arm64 code through grpc-js) and counts what it holds.
//
// Needs qemu-user-static besides what the image build needs; under CI=true a missing one fails.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BuiltImage } from '../../scripts/build-image.ts';
import { ARCHITECTURES, elfMachineOf, nodeVersion } from '../../scripts/runtime-base.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { SIM_RUNTIME_NAME } from '../../src/stand-ins/cri-runtime/sim-profile.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { agentImage, IMAGE_MAIN, IMAGE_NODE, requireImageBuild, unpackImage } from '../fixtures/agent-image.ts';
import { REPO_ROOT } from '../support/agent-process.ts';
import { requireExecutables } from '../support/require.ts';
import { checkEveryCommand } from '../support/cli-commands.ts';
import { runTool } from '../support/run-tool.ts';

const QEMU = 'qemu-aarch64-static';
/** Node.js under qemu-user starts in about a second here; a loaded machine takes longer. */
const RUN_TIMEOUT_MS = 60_000;

function arm64(image: BuiltImage): BuiltImage['images'][number] {
  const found = image.images.find((i) => i.architecture === 'arm64');
  assert.ok(found, 'precondition: the build made an arm64 image (IMAGE_ARCHITECTURES lists arm64)');
  return found;
}

test('the arm64 image runs under qemu-aarch64-static: its Node.js, every command, and `check` against the simulated runtime', async (t) => {
  if (!requireImageBuild(t, { containerd: false })) return;
  const tools = requireExecutables(t, [QEMU]);
  if (tools === undefined) return;
  const image = await agentImage();
  const built = arm64(image);
  assert.deepEqual([built.os, built.architecture], ['linux', 'arm64'], 'the image\'s config says linux/arm64');
  const root = await unpackImage(t, built.archive);
  assert.equal(elfMachineOf(join(root, IMAGE_NODE)), ARCHITECTURES['arm64']?.elfMachine, 'an AArch64 node');
  const run = (args: readonly string[]): ReturnType<typeof runTool> => runTool(tools[QEMU] as string, ['-L', root, join(root, IMAGE_NODE), ...args], { PATH: '/usr/bin:/bin' }, RUN_TIMEOUT_MS);

  const node = await run(['-p', 'process.version + " " + process.arch']);
  assert.equal(node.code, 0, node.stderr);
  assert.equal(node.stdout, `v${nodeVersion(REPO_ROOT)} arm64\n`, 'the build\'s Node.js release, on arm64');

  const nodepulse = (args: readonly string[]): ReturnType<typeof runTool> => run([join(root, IMAGE_MAIN), ...args]);
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  t.diagnostic(`commands: ${(await checkEveryCommand(nodepulse, version)).join(', ')}`);

  const socket = join(root, 'tmp', 'cri.sock');
  const sim = await startSimRuntime({ clock: new SystemClock(), socketPath: socket, pods: 3, containersPerPod: 2 });
  t.after(() => sim.close());
  const check = await nodepulse(['check', '--cri-endpoint', `unix://${socket}`, '-o', 'json']);
  assert.equal(check.code, 0, check.stderr);
  const report = JSON.parse(check.stdout) as { ok: boolean; runtime: { name: string } | null; pods: number; containers: { total: number } };
  assert.deepEqual([report.ok, report.runtime?.name, report.pods, report.containers.total], [true, SIM_RUNTIME_NAME, 3, 6]);
});
