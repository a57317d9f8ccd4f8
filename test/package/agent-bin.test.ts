// The package's `nodepulse-agent` bin, run the way an installed package runs it: the file itself,
// through its shebang. It must start the agent with the agent's Node.js settings and environment
// (src/cli/agent-node-flags.ts), the same ones the image's entrypoint and ENV give it
// (test/deploy/dockerfile.test.ts holds those).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'node:test';
import { AGENT_ENV, AGENT_NODE_FLAGS } from '../../src/cli/agent-node-flags.ts';
import { NODE_24, REPO_ROOT } from '../support/agent-process.ts';

const BIN = join(REPO_ROOT, 'dist', 'src', 'cli', 'agent-main.js');
const HOOK = join(REPO_ROOT, 'test', 'support', 'exec-argv-hook.ts');

test('nodepulse-agent runs the agent with the agent\'s Node.js settings, from its shebang', (t) => {
  assert.ok(existsSync(BIN), 'precondition: the package is built (npm test builds it first)');
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  assert.equal(pkg.bin['nodepulse-agent'], 'dist/src/cli/agent-main.js', 'the package installs it as nodepulse-agent');
  const assignments = Object.entries(AGENT_ENV).map(([k, v]) => `${k}=${v}`);
  assert.equal(readFileSync(BIN, 'utf8').split('\n')[0], `#!/usr/bin/env -S ${assignments.join(' ')} node ${AGENT_NODE_FLAGS.join(' ')}`);

  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-agent-bin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'exec-argv.json');
  // npm marks a bin executable when it installs the package; the build leaves it as it is.
  chmodSync(BIN, 0o755);
  const run = spawnSync(BIN, ['--help'], {
    encoding: 'utf8',
    env: { ...withoutAgentEnv(process.env), PATH: `${dirname(NODE_24)}${delimiter}${process.env['PATH'] ?? ''}`, NODE_OPTIONS: `--import=${HOOK}`, EXEC_ARGV_LOG: log },
    timeout: 30_000,
  });
  assert.equal(run.status, 0, `exit ${run.status ?? run.signal}: ${run.stderr}`);
  assert.match(run.stdout, /--relist-period/, 'the agent\'s own help');
  const started = JSON.parse(readFileSync(log, 'utf8')) as { execArgv: string[]; env: Record<string, string> };
  assert.deepEqual(started.execArgv, [...AGENT_NODE_FLAGS], 'the Node.js options the process runs with');
  for (const [name, value] of Object.entries(AGENT_ENV)) assert.equal(started.env[name], value, `${name} in the environment the process runs with`);
});

/** The environment without the agent's own variables, so that only the shebang can set them. */
function withoutAgentEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of Object.keys(AGENT_ENV)) delete out[name];
  return out;
}
