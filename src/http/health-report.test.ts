import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Liveness, LivenessState } from '../liveness/liveness.ts';
import type { RuntimeHealthState } from '../relist/relist-ledger.ts';
import { healthzChecks, livezChecks, readyzChecks, renderHealth } from './health-report.ts';

const row = (name: string, state: LivenessState, reason = 'why'): Liveness => ({ name, state, reason });

describe('livezChecks mirrors the table in its module header', () => {
  const table: ReadonlyArray<[LivenessState, boolean, boolean]> = [
    // state, within grace, ok
    ['Alive', true, true],
    ['Alive', false, true],
    ['Unknown', true, true],
    ['Unknown', false, false],
    ['Stalled', true, false],
    ['Stalled', false, false],
    ['Dead', true, false],
    ['Dead', false, false],
  ];
  for (const [state, grace, ok] of table) {
    it(`a ${state} loop ${grace ? 'within' : 'after'} the start-up grace is ${ok ? 'ok' : 'failed'}`, () => {
      const [check] = livezChecks([row('relister', state)], grace);
      assert.equal(check?.ok, ok);
      assert.equal(check?.name, 'relister');
    });
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

describe('readyzChecks mirrors the /readyz table in its module header', () => {
  const started = { ready: true, reason: 'config loaded, loops started, HTTP serving' };
  const notStarted = { ready: false, reason: 'loops not started' };
  // the agent started?, the ledger's state, /readyz status
  const table: ReadonlyArray<[boolean, RuntimeHealthState, 200 | 503]> = [
    [false, 'Healthy', 503],
    [false, 'CannotObserve', 503],
    [true, 'Healthy', 200],
    [true, 'Unhealthy', 200],
    [true, 'NotYetObserved', 200],
    [true, 'CannotObserve', 503],
  ];
  for (const [isStarted, state, status] of table) {
    it(`an agent ${isStarted ? 'started and serving' : 'not started'} with a runtime ${state}: ${status}`, () => {
      const checks = readyzChecks(isStarted ? started : notStarted, { state, message: 'the ledger\'s words' });
      assert.equal(renderHealth('readyz', checks, false).status, status);
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
