// `nodepulse demo` (the README's first command) plays its whole scenario and every step of the
// timeline shows up in its output. It runs the built CLI as a user would, on real time: the
// scenario itself is about 50 s long.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/free-port.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const CLI = `${ROOT}dist/src/cli/main.js`;
/** The scenario ends at 48 s; this leaves room for a slow, shared CI machine. */
const DEMO_BOUND_MS = 120_000;

test('nodepulse demo plays the scenario to the end and prints every step of the timeline', { timeout: DEMO_BOUND_MS + 10_000 }, async () => {
  assert.ok(existsSync(CLI), `precondition: ${CLI} is built (npm run build)`);
  const port = await freePort();
  const child = spawn(NODE, [CLI, 'demo', '--http-address', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), DEMO_BOUND_MS);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  assert.equal(code, 0, `demo exited ${code}\nstdout:\n${out}\nstderr:\n${err}`);

  // The story, in order: each group's lines appear after the previous group's, in any order
  // within the group (the lease loop and the condition loop react on their own ticks).
  const groups: RegExp[][] = [
    [/agent \/status +http:\/\/127\.0\.0\.1:\d+\/status/, /agent \/metrics +http:\/\/127\.0\.0\.1:\d+\/metrics/],
    [/runtime judgement: Healthy/],
    [/lease nodepulse\/demo-node renewed: renewTime \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/, /Node condition RuntimeRelistUnhealthy=False\/RelistHealthy/],
    [/SCENARIO: the runtime hangs/],
    [/runtime judgement: Unhealthy — relist was last seen active [\d.]+s ago; threshold is 10s/],
    [/lease withheld/, /Node condition RuntimeRelistUnhealthy=True\/RelistStale/],
    [/SCENARIO: the runtime recovers/],
    [/runtime judgement: Healthy/],
    [/lease nodepulse\/demo-node renewed/, /Node condition RuntimeRelistUnhealthy=False\/RelistHealthy/],
    [/demo complete: every step of the scenario was seen/],
  ];
  let from = 0;
  for (const group of groups) {
    let end = from;
    for (const line of group) {
      const m = line.exec(out.slice(from));
      assert.ok(m !== null, `${line} after offset ${from} in:\n${out}`);
      end = Math.max(end, from + m.index + m[0].length);
    }
    from = end;
  }
});
