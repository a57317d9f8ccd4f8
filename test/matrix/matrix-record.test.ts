// The recorded matrix's table and figures, column by column of matrix-record.ts's header.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeletFirstNotReady, recordedRow, renderMatrixTable } from './matrix-record.ts';

const hang = recordedRow({
  row: { id: 'runtime-hangs', title: 'everything hangs (containerd SIGSTOP)' },
  outcome: { problems: [] },
  endMs: 140_000,
  timeline: [
    { atMs: -3_000, signal: 'kubelet Ready=True', detail: 'KubeletReady: kubelet is posting ready status' },
    { atMs: -3_000, signal: 'condition False/RelistHealthy' },
    { atMs: -2_500, signal: 'lease renewed' },
    { atMs: 55_100, signal: 'lease stopped' },
    { atMs: 60_400, signal: 'condition True/RelistStale', detail: 'relist was last seen active 1m0.1s ago' },
    { atMs: 105_300, signal: 'fleet Stale' },
    { atMs: 124_900, signal: 'kubelet Ready=False', detail: 'KubeletNotReady: container runtime is down | PLEG' },
    { atMs: 141_200, signal: 'condition False/RelistHealthy' },
    { atMs: 141_500, signal: 'lease moves' },
    { atMs: 150_000, signal: 'kubelet Ready=True' },
  ],
});

const wedged = recordedRow({
  row: { id: 'agent-wedged', title: "the agent's own loop wedged (SIGSTOP the agent)" },
  outcome: { problems: ['lease moves: seen 70.0 s after onset; must be 35.0 s to 66.5 s (liveness)'] },
  endMs: undefined,
  timeline: [
    { atMs: -1_000, signal: 'lease stopped' },
    { atMs: 50_000, signal: 'condition Unknown/AgentLeaseStale' },
    { atMs: 70_000, signal: 'lease moves' },
  ],
});

test('one line per row: the kubelet, nodepulse, its Lease, fleet, the controller, the way back, the judgement', () => {
  assert.equal(renderMatrixTable([hang, wedged]), [
    '| row | the kubelet | nodepulse | its Lease stopped | fleet Stale | the controller | after the end | judged |',
    '|---|---|---|---|---|---|---|---|',
    '| everything hangs (containerd SIGSTOP) | Ready=False at 124.9 s (KubeletNotReady: container runtime is down / PLEG) | True/RelistStale at 60.4 s | 55.1 s | 105.3 s | – | False +1.2 s, lease +1.5 s, Ready +10.0 s | as expected |',
    "| the agent's own loop wedged (SIGSTOP the agent) | Ready throughout | no change | -1.0 s | – | Unknown/AgentLeaseStale at 50.0 s | lease moves at 70.0 s (restarted) | lease moves: seen 70.0 s after onset; must be 35.0 s to 66.5 s (liveness) |",
    '',
  ].join('\n'));
});

test('the record drops the renewals it does not show, and gives the kubelet\'s first Ready=False per row', () => {
  assert.equal(hang.timeline.some((x) => x.signal === 'lease renewed'), false);
  assert.deepEqual(kubeletFirstNotReady([hang, wedged]), { 'runtime-hangs': 124_900, 'agent-wedged': undefined });
});
