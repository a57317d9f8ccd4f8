import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { createLogger, memorySink } from '../log/logger.ts';
import { BLOCK_ENV, DebugHookError, installDebugHooks, WALL_OFFSET_FILE_ENV } from './debug-hooks.ts';

function setup(env: Record<string, string>) {
  const clock = new ManualClock();
  const sink = memorySink();
  const signals = new EventEmitter();
  const uninstall = installDebugHooks({ env, clock, logger: createLogger({ level: 'info', destination: sink, time: () => '' }), signals });
  return { clock, sink, signals, uninstall };
}

test('without their variables no hook is installed and nothing is logged', () => {
  const { signals, sink } = setup({});
  assert.equal(signals.listenerCount('SIGUSR1') + signals.listenerCount('SIGUSR2'), 0);
  assert.deepEqual(sink.lines, []);
});

test('a bad block value is refused with a key: value must be rule line', () => {
  assert.throws(
    () => setup({ [BLOCK_ENV]: '5s' }),
    (err: unknown) => err instanceof DebugHookError && err.message === `${BLOCK_ENV}: 5s must be a whole number of milliseconds from 1 to 60000`,
  );
});

test('SIGUSR1 steps only the wall reading to the offset in the file, and a bad file changes nothing', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'np-hooks-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'offset');
  const { clock, signals, sink, uninstall } = setup({ [WALL_OFFSET_FILE_ENV]: file });
  assert.equal(sink.lines[0]?.['msg'], 'Debug hooks enabled: this agent can be hurt on purpose');
  const monotonic = clock.monotonicMs();
  const wall = clock.wallMicros();

  writeFileSync(file, '3600000\n');
  signals.emit('SIGUSR1');
  assert.equal(clock.wallOffsetMs, 3_600_000);
  assert.equal(clock.wallMicros() - wall, 3_600_000_000);
  assert.equal(clock.monotonicMs(), monotonic, 'the monotonic clock never moves with the wall');

  writeFileSync(file, 'an hour\n');
  signals.emit('SIGUSR1');
  assert.equal(clock.wallOffsetMs, 3_600_000, 'a bad file leaves the offset as it was');
  assert.deepEqual(sink.lines.map((l) => l['msg']), [
    'Debug hooks enabled: this agent can be hurt on purpose',
    'Debug hook: wall clock stepped',
    'Debug hook: wall clock step refused',
  ]);

  uninstall();
  assert.equal(signals.listenerCount('SIGUSR1'), 0);
});
