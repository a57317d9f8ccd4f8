// The fault matrix in `npm test`: every row of test/matrix/matrix-rows.ts made real on one node of
// the shared test cluster at the CI settings (matrix-settings.ts: threshold 6s, grace 15s), one
// row after another, each judged by row-judge.ts and the node restored before the next
// (matrix-driver.ts). A row fails with its name, each signal that broke its rule and the window
// it had. NODEPULSE_MATRIX_ROWS=a,b runs only those rows (to work on one). The recorded run at the shipped defaults is `npm run matrix:cluster`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireImageBuild } from '../fixtures/agent-image.ts';
import { requireGo } from '../support/cri-fault-proxy.ts';
import { matrixSettings } from '../matrix/matrix-settings.ts';
import { renderMatrixTable, recordedRow } from '../matrix/matrix-record.ts';
import type { RowId } from '../matrix/matrix-rows.ts';
import { runMatrix } from './matrix-driver.ts';
import { sharedCluster } from './shared-cluster.ts';

test('the fault matrix at the CI settings: every row on the real cluster, judged', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined || !requireImageBuild(t) || !requireGo(t)) return;
  const only = process.env['NODEPULSE_MATRIX_ROWS']?.split(',').filter((x) => x !== '') as RowId[] | undefined;
  const run = await runMatrix({ cluster, settings: matrixSettings('ci'), ...(only === undefined ? {} : { only }), log: (line) => t.diagnostic(line), after: (fn) => t.after(fn) });
  t.diagnostic(`\n${renderMatrixTable(run.rows.map(recordedRow))}`);
  const failed = run.rows.filter((r) => r.outcome.problems.length > 0);
  assert.deepEqual(
    failed.map((r) => `${r.row.id}: ${r.outcome.problems.join('; ')}`),
    [],
    `rows not as expected on ${run.node}; timelines:\n${failed.map((r) => `${r.row.id}: ${r.timeline.filter((x) => x.signal !== 'lease renewed').map((x) => `${(x.atMs / 1000).toFixed(1)} ${x.signal}`).join(', ')}`).join('\n')}`,
  );
});
