import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { designTable } from '../../test/support/design-tables.ts';
import type { Liveness, LivenessState } from '../liveness/liveness.ts';
import type { RuntimeHealthState } from '../relist/relist-ledger.ts';
import { healthzChecks, livezChecks, readyzChecks, renderHealth } from './health-report.ts';

const row = (name: string, state: LivenessState, reason = 'why'): Liveness => ({ name, state, reason });

describe("livezChecks: docs/design.md's /livez table", () => {
  // Each row: a loop's state (the row's first cell; "Unknown (never ticked)" is Unknown), then
  // ok or failed within the start-up grace and after it.
  for (const [cell = '', within = '', after = ''] of designTable('The probes', "a loop's row").rows) {
    const state = cell.split(' ')[0] as LivenessState;
    for (const [grace, expected] of [[true, within], [false, after]] as const) {
      it(`a ${state} loop ${grace ? 'within' : 'after'} the start-up grace is ${expected}`, () => {
        assert.ok(['Alive', 'Unknown', 'Stalled', 'Dead'].includes(state), `precondition: "${cell}" names a Liveness state`);
        assert.ok(expected === 'ok' || expected === 'failed', `precondition: "${expected}" is ok or failed`);
        const [check] = livezChecks([row('relister', state)], grace);
        assert.equal(check?.ok, expected === 'ok');
        assert.equal(check?.name, 'relister');
      });
    }
  }

  it('a failed loop says its state and reason', () => {
    assert.deepEqual(livezChecks([row('lease', 'Stalled', 'last tick ended 31s ago; idle window is 30s')], false), [
      { name: 'lease', ok: false, reason: 'Stalled: last tick ended 31s ago; idle window is 30s' },
    ]);
    assert.deepEqual(livezChecks([row('lease', 'Unknown', 'no tick has begun yet')], false), [
      { name: 'lease', ok: false, reason: 'Unknown after the start-up grace: no tick has begun yet' },
    ]);
  });
});

describe('renderHealth writes what Kubernetes components write', () => {
  const checks = [
    { name: 'relister', ok: true, reason: '' },
    { name: 'runtime', ok: false, reason: 'relist was last seen active 3m5s ago; threshold is 3m0s' },
  ];

  it('verbose: one line per check, then the verdict, 503 on any failure', () => {
    assert.deepEqual(renderHealth('healthz', checks, true), {
      status: 503,
      body: '[+]relister ok\n[-]runtime failed: relist was last seen active 3m5s ago; threshold is 3m0s\nhealthz check failed\n',
    });
  });

  it('not verbose: a failure lists only the failed checks', () => {
    assert.deepEqual(renderHealth('healthz', checks, false), {
      status: 503,
      body: '[-]runtime failed: relist was last seen active 3m5s ago; threshold is 3m0s\nhealthz check failed\n',
    });
  });

  it('a pass is `ok`, or every line and `check passed` when verbose', () => {
    const ok = [{ name: 'relister', ok: true, reason: '' }];
    assert.deepEqual(renderHealth('livez', ok, false), { status: 200, body: 'ok\n' });
    assert.deepEqual(renderHealth('livez', ok, true), { status: 200, body: '[+]relister ok\nlivez check passed\n' });
  });

  it('no checks at all is a pass', () => {
    assert.deepEqual(renderHealth('livez', [], false), { status: 200, body: 'ok\n' });
  });
});

describe('healthzChecks', () => {
  it('lists each loop, then the runtime judgement, then the lease', () => {
    const checks = healthzChecks({
      loops: [row('relister', 'Alive'), row('lease', 'Stalled', 'tick in flight for 2m; stuck window is 1m30s')],
      withinStartupGrace: false,
      runtime: { state: 'Unhealthy', message: 'relist was last seen active 3m5s ago; threshold is 3m0s' },
      lease: { renewing: false, reason: 'withheld: the runtime is Unhealthy' },
    });
    assert.deepEqual(checks, [
      { name: 'relister', ok: true, reason: 'why' },
      { name: 'lease', ok: false, reason: 'Stalled: tick in flight for 2m; stuck window is 1m30s' },
      { name: 'runtime', ok: false, reason: 'Unhealthy: relist was last seen active 3m5s ago; threshold is 3m0s' },
      { name: 'lease-renewing', ok: false, reason: 'withheld: the runtime is Unhealthy' },
    ]);
  });

  it('a Healthy runtime and a renewed lease pass; NotYetObserved does not', () => {
    const base = { loops: [], withinStartupGrace: true, lease: { renewing: true, reason: '' } };
    assert.ok(healthzChecks({ ...base, runtime: { state: 'Healthy', message: '' } }).every((c) => c.ok));
    assert.equal(healthzChecks({ ...base, runtime: { state: 'NotYetObserved', message: 'relist has yet to be successful' } })[0]?.ok, false);
  });
});

describe("readyzChecks: docs/design.md's /readyz table", () => {
  const started = { ready: true, reason: 'config loaded, loops started, HTTP serving' };
  const notStarted = { ready: false, reason: 'loops not started' };
  const AGENTS: Readonly<Record<string, ReadonlyArray<{ ready: boolean; reason: string }>>> = {
    'loops not started, or HTTP not up': [notStarted, { ready: false, reason: 'HTTP not listening yet' }],
    'started and serving': [started],
  };
  const STATES: readonly RuntimeHealthState[] = ['Healthy', 'Unhealthy', 'NotYetObserved', 'CannotObserve'];
  for (const [agent = '', judgement = '', answer = ''] of designTable('The probes', 'the agent').rows) {
    const states = judgement === 'any' ? STATES : (judgement.split(', ') as RuntimeHealthState[]);
    const status = Number(answer.slice(0, 3));
    const failed = /^503: (\S+) failed/.exec(answer)?.[1];
    it(`an agent ${agent} with a runtime ${judgement}: ${answer}`, () => {
      assert.ok(agent in AGENTS, `precondition: the row's agent "${agent}" has a case`);
      for (const state of states) assert.ok(STATES.includes(state), `precondition: "${state}" is a runtime state`);
      for (const a of AGENTS[agent] ?? []) {
        for (const state of states) {
          const checks = readyzChecks(a, { state, message: "the ledger's words" });
          assert.equal(renderHealth('readyz', checks, false).status, status, `${a.reason}, ${state}`);
          const failing = checks.filter((c) => !c.ok).map((c) => c.name);
          if (failed === undefined) assert.deepEqual(failing, [], `${a.reason}, ${state}: no check failed`);
          else assert.ok(failing.includes(failed), `${a.reason}, ${state}: ${failed} failed (${failing.join(', ')})`);
        }
      }
    });
  }

  it('a runtime the agent cannot observe fails readiness with the ledger\'s words; a sick runtime does not', () => {
    const message = 'the agent cannot observe the runtime (permission-denied): connect EACCES /run/containerd/containerd.sock; no relist has succeeded since the agent started';
    assert.deepEqual(renderHealth('readyz', readyzChecks(started, { state: 'CannotObserve', message }), false), {
      status: 503,
      body: `[-]runtime-observable failed: ${message}\nreadyz check failed\n`,
    });
    assert.deepEqual(renderHealth('readyz', readyzChecks(started, { state: 'Unhealthy', message: 'relist was last seen active 3m5s ago' }), true), {
      status: 200,
      body: '[+]started ok\n[+]runtime-observable ok\nreadyz check passed\n',
    });
  });
});
