// The priority level's size and its arithmetic, as docs/install.md ("API priority and fairness")
// and deploy/base/flow-control.yaml's header write it, held to the level kustomize and the chart
// render: the shares, the seats they give on a default API server, what may be lent and
// borrowed, and how many requests the agents' flow may queue. A change to the manifests that
// leaves the prose behind fails here, and so does prose that does its sums wrong.
//
// The built-in levels' shares are Kubernetes 1.34's (k8s.io/apiserver
// pkg/apis/flowcontrol/bootstrap/default.go: exempt 0, catch-all 5, system 30, node-high 40,
// leader-election 10, workload-high 40, workload-low 100, global-default 20), and the server's
// limit is the default --max-requests-inflight 400 + --max-mutating-requests-inflight 200.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { helmRunner, only, REPO_ROOT, renderKustomize, withoutHooks, type K8sObject } from './render.ts';

const BUILT_IN_SHARES = { exempt: 0, 'catch-all': 5, system: 30, 'node-high': 40, 'leader-election': 10, 'workload-high': 40, 'workload-low': 100, 'global-default': 20 };
const SERVER_CL = 400 + 200;

const helm = helmRunner();
after(() => helm.close());

interface Limited {
  nominalConcurrencyShares: number;
  lendablePercent: number;
  borrowingLimitPercent: number;
  limitResponse: { type: string; queuing: { queues: number; handSize: number; queueLengthLimit: number } };
}

function level(objects: readonly K8sObject[]): Limited {
  const spec = only(objects, 'PriorityLevelConfiguration')['spec'] as { type: string; limited: Limited };
  assert.equal(spec.type, 'Limited');
  return spec.limited;
}

/** The figures a text states: `ceil(600 × S / T) = N`, lend N, borrow N, queue N, the per-node rate. */
function statedFigures(text: string): { shares: number; total: number; seats: number; lend: number; borrow: number; queued: number } {
  const flat = text.replace(/\s*\n\s*#?\s*/g, ' ');
  const sum = /ceil\(600 × (\d+) \/ (\d+)\) = (\d+)/.exec(flat);
  const lend = /borrow (\d+) of (?:its|nodepulse's) seats/.exec(flat);
  const borrow = /borrow up to (\d+) more/.exec(flat);
  const queued = /(\d+) (?:agent )?requests may (?:wait|queue)|may queue (\d+) requests/.exec(flat);
  assert.ok(sum && lend && borrow && queued, `precondition: the text states every figure (${[sum, lend, borrow, queued].map((m) => (m ? 'found' : 'missing')).join(', ')})`);
  return { shares: Number(sum[1]), total: Number(sum[2]), seats: Number(sum[3]), lend: Number(lend[1]), borrow: Number(borrow[1]), queued: Number(queued[1] ?? queued[2]) };
}

test('kustomize and the chart render the same priority level, sized as stated', () => {
  const fromKustomize = level(renderKustomize('deploy'));
  assert.deepEqual(level(withoutHooks(helm.template([]))), fromKustomize);
  assert.deepEqual(fromKustomize.limitResponse.type, 'Queue');
});

for (const [what, file] of [['docs/install.md', join(REPO_ROOT, 'docs', 'install.md')], ['deploy/base/flow-control.yaml', join(REPO_ROOT, 'deploy', 'base', 'flow-control.yaml')]] as const) {
  test(`${what} states the level's shares, seats, loans and queue as the manifests carry them, with the sums right`, () => {
    const l = level(renderKustomize('deploy'));
    const builtIn = Object.values(BUILT_IN_SHARES).reduce((a, b) => a + b, 0);
    const seats = Math.ceil((SERVER_CL * l.nominalConcurrencyShares) / (builtIn + l.nominalConcurrencyShares));
    assert.deepEqual(statedFigures(readFileSync(file, 'utf8')), {
      shares: l.nominalConcurrencyShares,
      total: builtIn + l.nominalConcurrencyShares,
      seats,
      lend: Math.round((seats * l.lendablePercent) / 100),
      borrow: Math.round((seats * l.borrowingLimitPercent) / 100),
      queued: l.limitResponse.queuing.handSize * l.limitResponse.queuing.queueLengthLimit,
    });
  });
}

test('the stated per-node rate is one renewal per renew interval plus a GET and a PATCH per condition refresh, with the agent\'s defaults', () => {
  const defaults = readFileSync(join(REPO_ROOT, 'deploy', 'helm', 'nodepulse', 'files', 'defaults.yaml'), 'utf8');
  const leaseS = Number(/leaseDuration: (\d+)s/.exec(defaults)?.[1]);
  const refreshMin = Number(/conditionRefresh: (\d+)m0s/.exec(defaults)?.[1]);
  const fraction = Number(/renewIntervalFraction: ([\d.]+)/.exec(defaults)?.[1]);
  assert.ok(leaseS > 0 && refreshMin > 0 && fraction > 0, 'precondition: files/defaults.yaml gives the lease duration, the refresh and the renew fraction');
  const perNode = 1 / (leaseS * fraction) + 2 / (refreshMin * 60);
  const docs = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8').replace(/\s+/g, ' ');
  const stated = /About ([\d.]+) requests\/s per node: ([\d,]+)\/s for 2,000 nodes, ([\d,]+)\/s for 5,000/.exec(docs);
  assert.ok(stated, 'precondition: docs/install.md states the per-node rate');
  assert.equal(Number(stated[1]), Math.round(perNode * 1000) / 1000);
  assert.deepEqual([Number(stated[2]), Number(stated[3])], [Math.round(perNode * 2000), Math.round(perNode * 5000)]);
});

test('the seats a fleet keeps busy are the stated rate times the seat time measured in the cost table, and the nodes the level carries follow', () => {
  const docs = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8').replace(/\s+/g, ' ');
  const rate = /About [\d.]+ requests\/s per node: ([\d,]+)\/s for 2,000 nodes, ([\d,]+)\/s for 5,000/.exec(docs);
  const sizing = /measured ([\d.]+) ms for an agent's renewal .*? so 5,000 nodes keep about ([\d.]+) seats busy on average and 2,000 nodes ([\d.]+)\. At that service time the (\d+) seats carry about ([\d,]+) nodes/.exec(docs);
  const table = /\| nodepulse agents \(merge PATCH, HTTP\/1\.1 JSON\) \|(?: [^|]+ \|){5} ([\d.]+) ms/.exec(docs);
  assert.ok(rate && sizing && table, 'precondition: docs/install.md states the per-node rate, the sizing sentence and the cost table');
  const seatS = Number(sizing[1]) / 1000;
  assert.equal(Number(sizing[1]), Number(table[1]), 'the sizing takes the seat time the cost table measured');
  assert.deepEqual([Number(sizing[2]), Number(sizing[3])], [Math.round(Number(rate[2]) * seatS * 10) / 10, Math.round(Number(rate[1]) * seatS * 10) / 10]);
  const seats = Number(/ceil\(600 × \d+ \/ \d+\) = (\d+) seats/.exec(docs)?.[1]);
  assert.equal(Number(sizing[4]), seats, 'the nominal seats of the sum above');
  const carried = (seats / seatS) * (5_000 / Number(rate[2]));
  assert.equal(Number((sizing[5] ?? '').replace(',', '')), Math.round(carried / 100) * 100, `about ${carried.toFixed(0)} nodes`);
});
