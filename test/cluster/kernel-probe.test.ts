// This kernel has everything a node needs (kernel-probe.ts's table), so the nodes use the bridge
// CNI plugin and kube-proxy's iptables mode, with no fallback. A missing feature fails here with
// what failed, under CI as anywhere: the probe needs only root and iproute2/iptables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRoot, requireExecutables } from '../support/require.ts';
import { kernelGaps, probeKernel } from './kernel-probe.ts';

test('the kernel has veth, bridge, br_netfilter, nf_tables, iptables nat and conntrack', (t) => {
  if (requireExecutables(t, ['unshare', 'ip', 'iptables']) === undefined) return;
  if (!isRoot()) {
    if (process.env['CI'] === 'true') throw new Error('precondition: the kernel probe needs root, and CI must run as root');
    t.skip('needs root to make a network namespace');
    return;
  }
  const results = probeKernel();
  assert.deepEqual(results.map((r) => r.check), ['veth', 'bridge', 'br_netfilter', 'nf_tables', 'iptables nat', 'conntrack']);
  assert.deepEqual(kernelGaps(results), []);
  assert.match(results.find((r) => r.check === 'nf_tables')?.detail ?? '', /\(nf_tables\)/, 'iptables is the nf_tables backend');
});
