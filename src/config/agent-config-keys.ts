// Every key of `nodepulse agent`, with the flag, the environment variables and the default that
// feed it. The schema (agent-config-schema.ts) says what a valid value is; this table says where
// a value can come from, so that the loader, --help and the docs read one list.
//
// Naming: the key is the flag in camelCase (--relist-deadline → relistDeadline); its generic
// environment variable is NODEPULSE_ + the key in UPPER_SNAKE (NODEPULSE_RELIST_DEADLINE). Four
// keys also read the variable Kubernetes tooling already sets: NODE_NAME (downward API),
// POD_NAMESPACE (downward API), CONTAINER_RUNTIME_ENDPOINT (crictl's), KUBECONFIG (kubectl's).
// When both are set, the NODEPULSE_ one wins: it can only have been meant for nodepulse.
//
// The flags follow the one grammar of every command (flag-grammar.ts); nodeCondition is the one
// boolean. Two flags are the command's, not config keys: --config FILE and --print-config.
//
// Defaults are written as Go prints a duration ("40s", "1m0s"), and go through the same schema as
// any other value. Two defaults are derived from other keys and have no text here:
// renewInterval (leaseDuration × 0.25, upstream) and stuckWindow (relistDeadline + 30 s).

import type { FlagSpec } from './flag-grammar.ts';

export const AGENT_CONFIG_KEYS = [
  'nodeName',
  'criEndpoint',
  'kubeconfig',
  'leaseNamespace',
  'leaseDuration',
  'renewInterval',
  'leaseRecheck',
  'relistPeriod',
  'relistThreshold',
  'relistDeadline',
  'idleWindow',
  'stuckWindow',
  'maxMessageSize',
  'statusPeriod',
  'statusDeadline',
  'apiTimeout',
  'conditionRefresh',
  'nodeCondition',
  'httpAddress',
  'startupGrace',
  'logLevel',
] as const;

export type AgentConfigKey = (typeof AGENT_CONFIG_KEYS)[number];

/** A key's flag (`--relist-deadline`), its variables (highest precedence first), default and help. */
export interface AgentConfigKeySpec extends FlagSpec {
  readonly key: AgentConfigKey;
}

/** The well-known variable some keys also read, below their NODEPULSE_ variable. */
const WELL_KNOWN_ENV: Partial<Record<AgentConfigKey, string>> = {
  nodeName: 'NODE_NAME',
  leaseNamespace: 'POD_NAMESPACE',
  criEndpoint: 'CONTAINER_RUNTIME_ENDPOINT',
  kubeconfig: 'KUBECONFIG',
};

const PLACEHOLDERS: Partial<Record<AgentConfigKey, string>> = {
  nodeName: 'NAME',
  nodeCondition: 'BOOL',
  criEndpoint: 'URL',
  kubeconfig: 'FILE',
  leaseNamespace: 'NAMESPACE',
  maxMessageSize: 'BYTES',
  httpAddress: 'HOST:PORT',
  logLevel: 'LEVEL',
};

const DEFAULTS: Record<AgentConfigKey, string | undefined> = {
  nodeName: undefined,
  criEndpoint: undefined,
  kubeconfig: undefined,
  leaseNamespace: 'nodepulse',
  leaseDuration: '40s',
  renewInterval: undefined,
  leaseRecheck: '1s',
  relistPeriod: '1s',
  relistThreshold: '1m0s',
  relistDeadline: '20s',
  idleWindow: '30s',
  stuckWindow: undefined,
  maxMessageSize: '16Mi',
  statusPeriod: '5s',
  statusDeadline: '10s',
  apiTimeout: '10s',
  conditionRefresh: '5m0s',
  nodeCondition: 'true',
  httpAddress: ':9356',
  startupGrace: '30s',
  logLevel: 'info',
};

const HELP: Record<AgentConfigKey, string> = {
  nodeName: 'the Node this agent watches; also the Lease name (required; a DNS subdomain)',
  criEndpoint: "the CRI runtime socket, a unix:// URL (default: probe containerd's, CRI-O's, k3s's and cri-dockerd's sockets for one whose CRI Version answers, preferring the runtime the Node's containerRuntimeVersion names)",
  kubeconfig: 'kubeconfig file; in-cluster config when unset',
  leaseNamespace: "the Lease's namespace (a DNS label; never kube-node-lease)",
  leaseDuration: 'leaseDurationSeconds written on the Lease (whole seconds)',
  renewInterval: 'time between renewals while the gate is open (default leaseDuration × 0.25)',
  leaseRecheck: 'time before the gate is looked at again while the lease is withheld',
  relistPeriod: 'time from the end of one relist to the start of the next',
  relistThreshold: 'how old the last successful relist may be before the runtime is Unhealthy',
  relistDeadline: 'one deadline for both listing calls of a relist',
  idleWindow: 'how long a loop may sit between ticks before it reads as Stalled',
  stuckWindow: 'how long one tick may run before its loop reads as Stalled (default relistDeadline + 30s)',
  maxMessageSize: 'largest CRI answer accepted, in bytes or as a quantity (16Mi)',
  statusPeriod: "time between polls of the runtime's Status",
  statusDeadline: 'deadline of one Status poll',
  apiTimeout: 'timeout of every Kubernetes API request',
  conditionRefresh: "how often the Node condition's lastHeartbeatTime is refreshed and repaired",
  nodeCondition: 'publish the RuntimeRelistUnhealthy Node condition and its Events',
  httpAddress: 'host:port for /livez /readyz /healthz /metrics /status; an empty host is every address of both families, IPv4 alone where the pod has no IPv6 (IPv6 hosts in brackets)',
  startupGrace: 'how long /livez accepts loops that have not ticked yet',
  logLevel: 'pino level: fatal, error, warn, info, debug, trace or silent',
};

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function upperSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

export const AGENT_CONFIG_SPECS: readonly AgentConfigKeySpec[] = AGENT_CONFIG_KEYS.map((key) => {
  const wellKnown = WELL_KNOWN_ENV[key];
  return {
    key,
    flag: `--${kebab(key)}`,
    env: wellKnown === undefined ? [`NODEPULSE_${upperSnake(key)}`] : [`NODEPULSE_${upperSnake(key)}`, wellKnown],
    boolean: key === 'nodeCondition',
    placeholder: PLACEHOLDERS[key] ?? 'DURATION',
    defaultText: DEFAULTS[key],
    help: HELP[key],
  };
});

/** `--config FILE`: the file layer, below flags and env. */
export const CONFIG_FILE_SPEC: FlagSpec = {
  key: 'config',
  flag: '--config',
  boolean: false,
  placeholder: 'FILE',
  env: ['NODEPULSE_CONFIG'],
  defaultText: undefined,
  help: 'YAML or JSON file of camelCase keys, read below flags and env',
};

/** `--print-config`: print the effective config and exit. */
export const PRINT_CONFIG_SPEC: FlagSpec = {
  key: 'printConfig',
  flag: '--print-config',
  boolean: true,
  env: [],
  defaultText: 'false',
  help: 'print the effective config (itself a valid --config file) and exit',
};

/** The spec of a key; every key has one. */
export function specOf(key: AgentConfigKey): AgentConfigKeySpec {
  const spec = AGENT_CONFIG_SPECS.find((s) => s.key === key);
  if (spec === undefined) throw new Error(`no spec for config key ${key}`);
  return spec;
}

export function isAgentConfigKey(name: string): name is AgentConfigKey {
  return (AGENT_CONFIG_KEYS as readonly string[]).includes(name);
}
