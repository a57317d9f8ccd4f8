import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FailureRun } from './failure-run.ts';
import { createLogger, memorySink } from './logger.ts';

test('a run of 100 failures gives exactly two lines at info, the second with the count', () => {
  const sink = memorySink();
  const run = new FailureRun(createLogger({ level: 'info', destination: sink }), 'Relist');
  for (let i = 0; i < 100; i++) run.failed(new Error('connection refused'));
  run.succeeded();
  run.succeeded(); // no run going: nothing more
  assert.deepEqual(
    sink.lines.map((l) => [l['level'], l['msg'], l['failures']]),
    [
      ['warn', 'Relist failing', undefined],
      ['info', 'Relist recovered', 100],
    ],
  );
  assert.equal(sink.lines[1]?.['firstError'], 'connection refused');
});

test('a bearer token in a logged object is redacted', () => {
  const sink = memorySink();
  const logger = createLogger({ level: 'debug', destination: sink });
  logger.info({ token: 'secret-token', request: { headers: { authorization: 'Bearer secret-token' } } }, 'Request');
  assert.doesNotMatch(JSON.stringify(sink.lines), /secret-token/);
});
