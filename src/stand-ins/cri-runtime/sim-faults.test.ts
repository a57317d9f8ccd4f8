import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FaultScript, MALFORMED_ANSWER, validateFault } from './sim-faults.ts';

describe('fault script', () => {
  test('a counted fault applies to that many calls of its method, then no more', () => {
    const script = new FaultScript();
    script.add({ method: 'ListContainers', code: 14, count: 2 });
    assert.equal(script.take('ListPodSandbox'), undefined);
    assert.equal(script.take('ListContainers')?.code, 14);
    assert.equal(script.take('ListContainers')?.code, 14);
    assert.equal(script.take('ListContainers'), undefined);
    assert.deepEqual(script.active(), []);
  });

  test('an uncounted fault applies until cleared; "*" matches every method; the first added wins', () => {
    const script = new FaultScript();
    script.add({ method: 'Status', delayMs: 10, count: 1 });
    script.add({ method: '*', hang: true });
    assert.deepEqual(script.take('Status'), { method: 'Status', delayMs: 10, count: 1 });
    for (let i = 0; i < 5; i++) assert.equal(script.take('Status')?.hang, true);
    assert.equal(script.take('Version')?.hang, true);
    script.clear();
    assert.equal(script.take('Version'), undefined);
  });

  test('a malformed fault is valid alone or with a delay, and its answer is field 1 as a varint', () => {
    assert.deepEqual(validateFault({ method: 'ListContainers', malformed: true }), []);
    assert.deepEqual(validateFault({ method: 'ListContainers', malformed: true, delayMs: 10, count: 2 }), []);
    assert.deepEqual([...MALFORMED_ANSWER], [0x08, 0x01], 'tag (1 << 3) | wire type 0, then the varint 1');
  });

  const invalid: Array<[unknown, string]> = [
    [null, 'fault: must be an object'],
    [{ method: 'StopContainer', code: 2 }, `method: "StopContainer" must be '*' or one of Version, Status, ListPodSandbox, ListContainers, PodSandboxStatus, ContainerStatus`],
    [{ method: '*', code: 0 }, 'code: 0 must be a gRPC status from 1 to 16'],
    [{ method: '*', code: 17 }, 'code: 17 must be a gRPC status from 1 to 16'],
    [{ method: '*', code: 2, count: 0 }, 'count: 0 must be a whole number ≥ 1'],
    [{ method: '*', delayMs: -1 }, 'delayMs: -1 must be a finite number ≥ 0'],
    [{ method: '*', hang: true, delayMs: 5 }, 'hang: true must not be combined with code or delayMs'],
    [{ method: '*' }, 'fault: must set code, delayMs, hang or malformed'],
    [{ method: '*', malformed: 'yes', delayMs: 1 }, 'malformed: must be true or false'],
    [{ method: '*', malformed: true, code: 2 }, 'malformed: true must not be combined with code or hang'],
    [{ method: '*', code: 2, extra: 1 }, 'extra: is not a fault field'],
  ];
  for (const [fault, problem] of invalid) {
    test(`refuses ${JSON.stringify(fault)}`, () => {
      assert.deepEqual(validateFault(fault), [problem]);
      assert.throws(() => new FaultScript().add(fault as never), RangeError);
    });
  }
});
