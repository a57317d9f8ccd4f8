// The built agent validates its config with zod, through the narrow import docs/bench.md chose:
// the shared module-load hook (test/support/module-load-hook.ts) records every module the agent's
// own process loads, and the agent is given a config that only zod can reject as it does (a
// cross-field rule, exit 2).
//
// Pinned: zod's `zod/v3` modules are loaded, and none of zod 4's own (`zod/v4/…`, which would
// bring every locale with them: docs/bench.md, "Config validation").
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AGENT_MAIN, REPO_ROOT } from '../support/agent-process.ts';
import { runBuiltCli } from '../support/run-cli.ts';

const HOOK = join(REPO_ROOT, 'test', 'support', 'module-load-hook.ts');

test('the built agent loads zod (zod/v3, none of zod/v4) and rejects a bad config through it', { timeout: 30_000 }, async (t) => {
  if (!existsSync(AGENT_MAIN)) {
    if (process.env['CI'] === 'true') throw new Error(`precondition: ${AGENT_MAIN} must be built (npm run build) before the tests`);
    t.skip('dist/ is not built');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'np-zod-load-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'modules.log');

  const { code, stderr } = await runBuiltCli(['agent', '--node-name', 'n1', '--relist-deadline', '5m'], {
    nodeArgs: ['--import', HOOK],
    env: { MODULE_LOAD_LOG: log },
  });

  assert.deepEqual(
    { code, errors: stderr.split('\n').filter((l) => l !== '') },
    { code: 2, errors: ['relistDeadline: 5m must be shorter than relistThreshold (1m0s)'] },
    'a cross-field rule, rejected by the schema',
  );
  const zod = readFileSync(log, 'utf8').split('\n').filter((url) => url.includes('/node_modules/zod/'));
  assert.ok(zod.some((url) => url.includes('/node_modules/zod/v3/')), `zod/v3 is loaded; zod modules seen: ${zod.join(', ') || 'none'}`);
  assert.deepEqual(zod.filter((url) => url.includes('/node_modules/zod/v4/')), [], 'no module of zod 4 (its core or locales) is loaded');
});
