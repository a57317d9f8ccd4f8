// A bearer token must never leave the agent except in the Authorization header of its own API
// requests: not in a log line (even at debug and trace, where every failed request is logged
// with its error), not in /status, /metrics or the health endpoints, not on stderr.
//
// The agent runs at --log-level trace with its token (from a token file, and inline in the
// kubeconfig) while the API answers 401, 403, 500, hangs and non-JSON, so that every error path
// that logs a request logs one; then everything it emitted is searched for the token.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { startAgentProcess, startStandIn } from '../support/agent-process.ts';
import { firstRenewalAfter, sleep } from '../faults/api-world.ts';

const USER = 'system:serviceaccount:nodepulse:nodepulse';
const PATHS = ['/status', '/metrics', '/healthz?verbose', '/livez?verbose', '/readyz?verbose'];

async function runAndCollect(t: TestContext, nodeName: string, token: string, via: 'file' | 'inline'): Promise<{ emitted: string; requestsWithToken: number }> {
  const standIn = await startStandIn(t, { nodeName });
  const { api } = standIn;
  const kubeconfig = join(standIn.dir, 'kubeconfig-token');
  if (via === 'file') {
    const tokenFile = join(standIn.dir, 'token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    writeKubeconfig(kubeconfig, { server: api.url, tokenFile });
  } else {
    writeKubeconfig(kubeconfig, { server: api.url, token });
  }
  api.auth.setTokens({ [token]: USER });
  const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 2, containersPerPod: 1 });
  t.after(() => sim.close());
  const agent = await startAgentProcess(t, {
    args: [
      '--node-name', nodeName, '--cri-endpoint', sim.endpoint, '--kubeconfig', kubeconfig, '--log-level', 'trace',
      '--relist-period', '100ms', '--lease-duration', '4s', '--api-timeout', '1s', '--status-period', '1s',
    ],
  });
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${standIn.leaseNamespace}/leases/${nodeName}`;
  await firstRenewalAfter({ standIn, sim, agent, leasePath }, 0, 10_000);

  // Every failure path that logs a request: 401 (the token refused), 403, 500, a hang, non-JSON.
  api.auth.setTokens({ 'some-other-token': USER });
  await sleep(2_500);
  api.auth.setTokens({ [token]: USER });
  api.auth.setRules([{ verbs: ['get'], resources: ['*'] }]);
  await sleep(1_000);
  api.auth.setRules(undefined);
  api.faults.failNext(2, `PATCH ${leasePath}`, 500);
  api.faults.hangNext(1, `PATCH ${leasePath}`);
  api.faults.nonJsonNext(1, `PATCH ${leasePath}`);
  await sleep(4_000);

  const bodies: string[] = [];
  for (const path of PATHS) bodies.push((await agent.get(path)).body);
  assert.equal(await agent.stop(), 0);
  const emitted = [...agent.logs().map((l) => JSON.stringify(l)), agent.stderrTail(), ...bodies].join('\n');
  const requestsWithToken = api.requests.all().length;
  return { emitted, requestsWithToken };
}

describe('no bearer token in anything the agent emits', { timeout: 60_000 }, () => {
  for (const via of ['file', 'inline'] as const) {
    test(`token ${via === 'file' ? 'from a token file' : 'inline in the kubeconfig'}: not in logs at trace, /status, /metrics, health, stderr`, async (t) => {
      const token = `np-secret-${via}-7f3a9c1e5b2d4086`;
      const { emitted, requestsWithToken } = await runAndCollect(t, `node-token-${via}`, token, via);
      assert.ok(requestsWithToken > 5, 'precondition: the agent talked to the API');
      assert.ok(emitted.includes('"level":10') || emitted.includes('"level":"trace"') || emitted.includes('"level":"debug"'), 'precondition: debug or trace lines were logged');
      assert.ok(emitted.includes('Lease renewal failing'), 'precondition: request errors were logged');
      assert.ok(emitted.includes('HTTP 401') || emitted.includes('unauthorized'), 'precondition: a 401 was logged');
      assert.ok(emitted.includes('nodepulse_lease_renewals_total'), 'precondition: /metrics was read');
      assert.equal(emitted.includes(token), false, 'the token appears nowhere');
      assert.equal(emitted.includes(token.slice(0, 16)), false, 'not even its first 16 characters');
      assert.doesNotMatch(emitted, /Bearer\s+\S/i, 'no Authorization value of any kind');
      assert.equal(emitted.includes(Buffer.from(token).toString('base64')), false, 'nor its base64');
    });
  }
});
