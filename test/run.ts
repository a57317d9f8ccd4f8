// The README's test command ends here: it runs every test file with node's own runner.
//
// Unit tests sit next to the code they test (src/**/*.test.ts). Tests that need real parts
// (containerd, promtool, kubectl, a spawned agent) live under test/. Under CI=true a missing
// real part fails its test instead of skipping it (see test/support/require.ts).
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';

const patterns = process.argv.slice(2);
const files = (patterns.length > 0 ? patterns : ['src/**/*.test.ts', 'test/**/*.test.ts'])
  .flatMap((p) => globSync(p))
  .sort();

if (files.length === 0) {
  console.error(`test/run.ts: no test files match ${JSON.stringify(patterns)}`);
  process.exit(1);
}

const result = spawnSync(
  process.execPath,
  ['--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
