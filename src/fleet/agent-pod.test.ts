// The table of agent-pod.ts, row by row: which listed agent pod `nodepulse verify` checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostPort, pickAgentPod, type AgentChoice, type AgentPod } from './agent-pod.ts';

interface PodOptions {
  phase?: string;
  ip?: string;
  node?: string;
  ready?: boolean;
  deleting?: boolean;
  portName?: string;
}

function pod(name: string, o: PodOptions = {}): AgentPod {
  return {
    metadata: { name, ...(o.deleting === true ? { deletionTimestamp: '2026-12-01T10:00:00Z' } : {}) },
    spec: { nodeName: o.node ?? `node-of-${name}`, containers: [{ ports: [{ name: o.portName ?? 'metrics', containerPort: 9356 }] }] },
    status: {
      phase: o.phase ?? 'Running',
      podIP: o.ip ?? '10.1.0.7',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

const ROWS: ReadonlyArray<{ row: string; pods: AgentPod[]; choice: AgentChoice }> = [
  { row: 'none listed: no agent pod matches', pods: [], choice: { none: 'no agent pod matches' } },
  {
    row: 'none usable: each named with why',
    pods: [
      pod('a', { phase: 'Pending' }),
      pod('b', { ip: '' }),
      pod('c', { node: '' }),
      pod('d', { deleting: true }),
      pod('e', { portName: 'http' }),
    ],
    choice: { none: 'no agent pod can be checked (a: phase Pending; b: no pod IP; c: no node; d: being deleted; e: no container port named metrics)' },
  },
  {
    row: 'usable ones, some Ready: the first Ready one by name',
    pods: [pod('c'), pod('a', { ready: false }), pod('b'), pod('0', { phase: 'Failed' })],
    choice: { picked: { pod: 'b', node: 'node-of-b', ip: '10.1.0.7', port: 9356, ready: true }, usable: 3 },
  },
  {
    row: 'usable ones, none Ready: the first by name',
    pods: [pod('y', { ready: false }), pod('x', { ready: false, ip: 'fd00::7' })],
    choice: { picked: { pod: 'x', node: 'node-of-x', ip: 'fd00::7', port: 9356, ready: false }, usable: 2 },
  },
];

for (const { row, pods, choice } of ROWS) {
  test(`pickAgentPod: ${row}`, () => {
    assert.deepEqual(pickAgentPod(pods), choice);
  });
}

test('hostPort writes an IPv6 pod IP in brackets, an IPv4 one as it is', () => {
  assert.equal(hostPort({ ip: 'fd00::7', port: 9356 }), '[fd00::7]:9356');
  assert.equal(hostPort({ ip: '10.1.0.7', port: 9356 }), '10.1.0.7:9356');
});
