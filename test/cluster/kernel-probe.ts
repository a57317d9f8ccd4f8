// What a node needs from this kernel, tried for real in a throwaway network namespace, since
// loadable modules are off here (CONFIG_MODULES unset): a feature is either built in or absent.
//
// | check        | tried as                                                             | needed by                 |
// |--------------|----------------------------------------------------------------------|---------------------------|
// | veth         | ip link add … type veth                                              | each node's link; each pod|
// | bridge       | ip link add … type bridge                                            | the cluster bridge; cni0  |
// | br_netfilter | /proc/sys/net/bridge/bridge-nf-call-iptables in the namespace        | kube-proxy (hairpin)      |
// | nf_tables    | iptables -V names nf_tables, and `iptables -t filter -S` answers     | iptables-nft, kube-proxy  |
// | iptables nat | a nat chain with DNAT (statistic, comment) and MASQUERADE (mark)     | kube-proxy's Services     |
// | conntrack    | a filter rule matching `-m conntrack --ctstate`; /proc/net/nf_conntrack| kube-proxy              |
//
// The namespace is `unshare --net`'s own: it and everything made in it go when the probe exits.
// The fallbacks, were one missing: the `ptp` CNI plugin for a missing bridge, kube-proxy's
// nftables mode (it needs `nft`, Debian's nftables) for a missing legacy match, and no
// kube-proxy at all (the agent reaching the API server's address directly) without NAT.
import { spawnSync } from 'node:child_process';

export interface ProbeResult {
  readonly check: string;
  readonly ok: boolean;
  /** What failed, or what was seen. */
  readonly detail: string;
}

const CHECKS: ReadonlyArray<{ check: string; script: string }> = [
  { check: 'veth', script: 'ip link add np-probe-a type veth peer name np-probe-b' },
  { check: 'bridge', script: 'ip link add np-probe-br type bridge' },
  { check: 'br_netfilter', script: 'cat /proc/sys/net/bridge/bridge-nf-call-iptables' },
  { check: 'nf_tables', script: 'iptables -V | grep -q nf_tables && iptables -t filter -S >/dev/null && iptables -V' },
  {
    check: 'iptables nat',
    script: [
      'iptables -t nat -N NP-PROBE',
      'iptables -t nat -A NP-PROBE -m comment --comment probe -m statistic --mode random --probability 0.5 -p tcp -j DNAT --to-destination 198.18.0.1:6443',
      'iptables -t nat -A POSTROUTING -m mark --mark 0x4000/0x4000 -j MASQUERADE',
      'iptables -t nat -A OUTPUT -m addrtype --dst-type LOCAL -j NP-PROBE',
      'iptables -t nat -S NP-PROBE | grep -c DNAT',
    ].join(' && '),
  },
  { check: 'conntrack', script: 'iptables -t filter -A INPUT -m conntrack --ctstate INVALID -j DROP && test -r /proc/net/nf_conntrack && echo nf_conntrack' },
];

/** Runs every check; each in a fresh network namespace, so one failure cannot hide another. */
export function probeKernel(): ProbeResult[] {
  return CHECKS.map(({ check, script }) => {
    const r = spawnSync('unshare', ['--net', '--', 'sh', '-c', `set -e\n${script}`], { encoding: 'utf8', timeout: 20_000 });
    const detail = `${r.stdout}${r.stderr}`.trim() || (r.error?.message ?? '');
    return { check, ok: r.status === 0, detail: detail.split('\n').slice(-2).join(' ') };
  });
}

/** The checks that failed, as one line each (empty when the kernel has everything). */
export function kernelGaps(results: readonly ProbeResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.check}: ${r.detail || 'failed'}`);
}
