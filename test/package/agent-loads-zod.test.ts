// The built agent validates its config with zod, through the narrow import docs/bench.md chose:
// a module-load hook in the agent's own process records every module it loads, and the agent is
// given a config that only zod can reject as it does (a cross-field rule, exit 2).
//
// Pinned: zod's `zod/v3` modules are loaded, and none of zod 4's own (`zod/v4/…`, which would
// bring every locale with them: docs/bench.md, "Config validation").
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AGENT_MAIN } from '../support/agent-process.ts';
import { runBuiltCli } from '../support/run-cli.ts';

const HOOK = `
import { registerHooks } from 'node:module';
import { writeSync } from 'node:fs';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => writeSync(2, loaded.map((url) => 'LOADED ' + url + '\\n').join('')));
`;

test('the built agent loads zod (zod/v3, none of zod/v4) and rejects a bad config through it', { timeout: 30_000 }, async (t) => {
  if (!existsSync(AGENT_MAIN)) {
    if (process.env['CI'] === 'true') throw new Error(`precondition: ${AGENT_MAIN} must be built (npm run build) before the tests`);
    t.skip('dist/ is not built');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'np-zod-load-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const hook = join(dir, 'hook.mjs');
  writeFileSync(hook, HOOK);

  const { code, stderr } = await runBuiltCli(['agent', '--node-name', 'n1', '--relist-deadline', '5m'], { nodeArgs: ['--import', hook] });

  const lines = stderr.split('\n');
  assert.deepEqual(
    { code, errors: lines.filter((l) => l !== '' && !l.startsWith('LOADED ')) },
    { code: 2, errors: ['relistDeadline: 5m must be shorter than relistThreshold (3m0s)'] },
    'a cross-field rule, rejected by the schema',
  );
  const zod = lines.filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length)).filter((url) => url.includes('/node_modules/zod/'));
  assert.ok(zod.some((url) => url.includes('/node_modules/zod/v3/')), `zod/v3 is loaded; zod modules seen: ${zod.join(', ') || 'none'}`);
  assert.deepEqual(zod.filter((url) => url.includes('/node_modules/zod/v4/')), [], 'no module of zod 4 (its core or locales) is loaded');
});
