// The cluster's network in the root namespace: one bridge holding the control plane's address,
// and the `unreachable` route that keeps the whole 198.18.0.0/15 block on this machine (layout.ts
// has the address plan).
//
// The bridge has no uplink: only the nodes' veths join it. IPv6 is off on it, so it carries no
// link-local address either; every address the cluster uses is one of the block's.
//
// Failure modes: `ip` failing throws with its stderr. bridgeDown() is safe when nothing is there.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { BLOCK, BRIDGE, BRIDGE_ADDRESS, NODE_PREFIX_LENGTH } from './layout.ts';

/** Runs `ip ARGS` (in the root namespace, or in `netnsPid`'s); throws with its stderr. */
export function ip(args: readonly string[], netnsPid?: number): string {
  const [file, argv] = netnsPid === undefined ? ['ip', args] : ['nsenter', ['-t', String(netnsPid), '-n', '--', 'ip', ...args]];
  try {
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim() ?? '';
    throw new Error(`ip ${args.join(' ')}${netnsPid === undefined ? '' : ` (in the network namespace of pid ${netnsPid})`} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

/** Whether a network device of this name exists in the root namespace. */
export function linkExists(name: string): boolean {
  return existsSync(`/sys/class/net/${name}`);
}

/** Makes the bridge with the control plane's address, and the block's unreachable route. */
export function bridgeUp(): void {
  if (linkExists(BRIDGE)) throw new Error(`network: ${BRIDGE} must not exist before up (a cluster is up, or a previous one was not taken down: run down)`);
  ip(['link', 'add', BRIDGE, 'type', 'bridge']);
  writeFileSync(`/proc/sys/net/ipv6/conf/${BRIDGE}/disable_ipv6`, '1');
  ip(['addr', 'add', `${BRIDGE_ADDRESS}/${NODE_PREFIX_LENGTH}`, 'dev', BRIDGE]);
  ip(['link', 'set', BRIDGE, 'up']);
  ip(['route', 'replace', 'unreachable', BLOCK]);
}

/** Removes the bridge (its routes go with it) and the block's route; returns what was removed. */
export function bridgeDown(): string[] {
  const removed: string[] = [];
  if (linkExists(BRIDGE)) {
    ip(['link', 'del', BRIDGE]);
    removed.push(`link ${BRIDGE}`);
  }
  if (ip(['route', 'show', 'type', 'unreachable', BLOCK]).trim() !== '') {
    ip(['route', 'del', 'unreachable', BLOCK]);
    removed.push(`route unreachable ${BLOCK}`);
  }
  return removed;
}
