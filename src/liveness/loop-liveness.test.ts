// LoopLiveness: every reading judges every loop, and each loop's change is logged once, by
// whoever reads first; a wedged loop's stall is logged by a reading of another loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { createLogger, memorySink } from '../log/logger.ts';
import { LoopLiveness } from './loop-liveness.ts';

function setup() {
  const clock = new ManualClock();
  const sink = memorySink();
  const loops = new LoopLiveness({
    names: ['relister', 'lease'] as const,
    clock,
    windows: { idleWindowMs: 30_000, stuckWindowMs: 90_000 },
    logger: createLogger({ level: 'info', destination: sink, time: () => '' }),
  });
  const logged = () => sink.lines.filter((l) => l['msg'] === 'Loop liveness changed').map((l) => [l['level'], l['loop'], l['state']]);
  return { clock, loops, logged };
}

test('booting loops are not logged; Alive is info, Stalled a warning, each once; reading one loop logs the other', async () => {
  const s = setup();
  assert.deepEqual(s.loops.all().map((l) => l.state), ['Unknown', 'Unknown']);
  assert.deepEqual(s.logged(), [], 'Unknown is remembered, not logged');
  s.loops.heartbeat('relister').begin(s.clock.monotonicMs()); // a relist that hangs
  s.loops.heartbeat('lease').begin(s.clock.monotonicMs());
  s.loops.heartbeat('lease').end(s.clock.monotonicMs());
  s.loops.of('lease');
  s.loops.of('lease');
  assert.deepEqual(s.logged(), [['info', 'relister', 'Alive'], ['info', 'lease', 'Alive']]);
  await s.clock.advance(90_000);
  s.loops.heartbeat('lease').begin(s.clock.monotonicMs());
  s.loops.heartbeat('lease').end(s.clock.monotonicMs());
  assert.equal(s.loops.of('lease').state, 'Alive', 'precondition: at the stuck window the relister is still Alive');
  await s.clock.advance(1);
  assert.equal(s.loops.of('lease').state, 'Alive');
  s.loops.all();
  assert.deepEqual(s.logged(), [['info', 'relister', 'Alive'], ['info', 'lease', 'Alive'], ['warn', 'relister', 'Stalled']], 'the lease\'s reading logged the relister\'s stall, once');
  assert.throws(() => s.loops.heartbeat('status' as 'lease'), /loop: status must be one of relister, lease/);
});
