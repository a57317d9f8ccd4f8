// RuntimeJudgement: the ledger's judgement at the clock's now, each change logged once by
// whoever reads it first, including a change by ageing while the relist in flight hangs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { createLogger, memorySink } from '../log/logger.ts';
import { createRelistLedger } from './relist-ledger.ts';
import { RuntimeJudgement } from './runtime-judgement.ts';

const THRESHOLD = 60_000;

function setup() {
  const clock = new ManualClock();
  const sink = memorySink();
  const { reader, writer } = createRelistLedger(THRESHOLD);
  const judgement = new RuntimeJudgement({ ledger: reader, clock, logger: createLogger({ level: 'info', destination: sink, time: () => '' }) });
  const stamp = () => ({ monotonicMs: clock.monotonicMs(), wallMicros: clock.wallMicros() });
  const logged = () => sink.lines.filter((l) => l['msg'] === 'Runtime judgement changed').map((l) => [l['level'], l['state'], l['why']]);
  return { clock, writer, judgement, stamp, logged };
}

test('each change is logged once, at the first reading that makes it; a change of why alone is a change', () => {
  const s = setup();
  assert.equal(s.judgement.now().state, 'NotYetObserved');
  s.judgement.now();
  assert.deepEqual(s.logged(), [['info', 'NotYetObserved', 'silent']], 'two readings, one line');
  const began = s.stamp();
  s.writer.began(began);
  s.writer.failed(began, { code: 'unavailable', message: 'connection refused', cause: 'runtime-error' });
  s.judgement.now();
  const ok = s.stamp();
  s.writer.began(ok);
  s.writer.succeeded(ok);
  s.judgement.now();
  s.judgement.now();
  assert.deepEqual(s.logged(), [
    ['info', 'NotYetObserved', 'silent'],
    ['info', 'NotYetObserved', 'failing'],
    ['info', 'Healthy', undefined],
  ]);
});

test('a relist that hangs cannot log the ageing: the first reading past the threshold does, as a warning, once', async () => {
  const s = setup();
  const ok = s.stamp();
  s.writer.began(ok);
  s.writer.succeeded(ok);
  s.judgement.now();
  s.writer.began(s.stamp()); // in flight, never finishes
  await s.clock.advance(THRESHOLD);
  assert.equal(s.judgement.now().state, 'Healthy', 'precondition: at the threshold, still Healthy');
  assert.deepEqual(s.logged(), [['info', 'Healthy', undefined]]);
  await s.clock.advance(1);
  assert.equal(s.judgement.now().state, 'Unhealthy');
  s.judgement.now();
  assert.deepEqual(s.logged(), [['info', 'Healthy', undefined], ['warn', 'Unhealthy', 'silent']]);
});
