// `npm run matrix:cluster [-- --rows a,b] [--settings defaults|ci]`: the fault matrix on the test
// cluster, every row in full at the shipped defaults (the kubelet's windows waited for), recorded.
//
// Uses the test cluster that is up (`npm run cluster -- up --nodes 2 --socket-gid 64321`); with
// none up it brings that one up and takes it down at the end. The rows run as the CI test runs
// them (test/cluster/matrix-driver.ts), at matrixSettings(--settings), default `defaults`.
//
// What it writes (the defaults run only): docs/fault-matrix.json, each row's recorded timeline
// with the run's facts (test/matrix/matrix-record.ts), and docs/fault-matrix.md, the rendered
// table. With --rows, the rows run replace their namesakes in the record and the others stay.
// The table goes to stdout, progress to stderr.
//
// Exit codes: 0 every row as expected; 1 a row was not (the record is still written, the
// problems in its last column), or a step failed; 2 a wrong option. A full run takes about
// 40 minutes (the rows' faults and watches sum to 29 min, each restore to a healthy node adds
// more).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parseArgs } from 'node:util';
import { SystemClock, wallMs } from '../src/clock/clock.ts';
import { readState } from '../test/cluster/cluster.ts';
import { rowsToRun, runMatrix } from '../test/cluster/matrix-driver.ts';
import { sharedCluster } from '../test/cluster/shared-cluster.ts';
import { recordedRow, renderMatrixTable, type MatrixMeta, type RecordedRow } from '../test/matrix/matrix-record.ts';
import type { RowId } from '../test/matrix/matrix-rows.ts';
import { matrixSettings } from '../test/matrix/matrix-settings.ts';

const REPO_ROOT = join(import.meta.dirname, '..');
export const RECORD_JSON = join(REPO_ROOT, 'docs', 'fault-matrix.json');
export const RECORD_MD = join(REPO_ROOT, 'docs', 'fault-matrix.md');
const SHARED_UP = ['up', '--nodes', '2', '--socket-gid', '64321'];
const clock = new SystemClock();

export interface MatrixRecord {
  readonly meta: MatrixMeta;
  readonly rows: readonly RecordedRow[];
}

const log = (line: string): void => {
  process.stderr.write(`matrix: ${line}\n`);
};

function cli(args: readonly string[]): void {
  execFileSync(process.execPath, [join(REPO_ROOT, 'test', 'cluster', 'cli.ts'), ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
}

function version(file: string, args: readonly string[], pattern: RegExp): string {
  try {
    return pattern.exec(execFileSync(file, args, { encoding: 'utf8', timeout: 10_000 }))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function markdown(record: MatrixRecord): string {
  const m = record.meta;
  return [
    '# The fault matrix, recorded',
    '',
    `Written by \`npm run matrix:cluster\` (scripts/matrix-cluster.ts) on ${m.date}: Kubernetes ${m.kubernetes}, containerd ${m.containerd}, nodepulse ${m.nodepulse}, the faults on ${m.node}, settings \`${m.settings}\`, load average at the start ${m.loadAverage}.`,
    'Times are seconds from the fault\'s onset (see test/cluster/matrix-driver.ts for how each fault is made); "after the end" counts from the fault\'s end. The rows\' rules and windows are test/matrix/matrix-rows.ts\'s.',
    '',
    renderMatrixTable(record.rows),
  ].join('\n');
}

async function main(): Promise<number> {
  let values: { rows?: string; settings?: string };
  try {
    ({ values } = parseArgs({ args: process.argv.slice(2), options: { rows: { type: 'string' }, settings: { type: 'string', default: 'defaults' } } }));
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    return 2;
  }
  if (values.settings !== 'defaults' && values.settings !== 'ci') {
    log(`--settings: ${values.settings} must be defaults or ci`);
    return 2;
  }
  const only = values.rows?.split(',').filter((x) => x !== '') as RowId[] | undefined;
  const settings = matrixSettings(values.settings);
  const cleanups: Array<() => Promise<void> | void> = [];
  const ours = readState() === undefined;
  if (ours) cli(SHARED_UP);
  try {
    const skip = (why?: string): void => {
      throw new Error(`the test cluster must be up: ${why ?? ''}`);
    };
    const cluster = await sharedCluster({ skip } as unknown as TestContext);
    if (cluster === undefined) return 1;
    const node = cluster.state.nodes[0]?.name ?? 'np-node-1';
    const meta: MatrixMeta = {
      date: new Date(wallMs(clock)).toISOString().slice(0, 10),
      kubernetes: version(join(cluster.state.binDir, 'kubectl'), ['version', '--client'], /Client Version: (\S+)/),
      containerd: version('containerd', ['--version'], /containerd \S+ (\S+)/),
      nodepulse: (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
      node,
      settings: settings.agentArgs.length === 0 ? 'the shipped defaults' : settings.agentArgs.join(' '),
      loadAverage: loadavg().map((x) => x.toFixed(1)).join(' '),
    };
    const before = only !== undefined && existsSync(RECORD_JSON) ? (JSON.parse(readFileSync(RECORD_JSON, 'utf8')) as MatrixRecord).rows : [];
    const order: string[] = rowsToRun(settings).map((r) => r.id);
    const rows: RecordedRow[] = [];
    // Recorded after every row, so a run cut short keeps what it measured.
    const record = (run: Parameters<typeof recordedRow>[0]): void => {
      rows.push(recordedRow(run));
      if (values.settings !== 'defaults') return;
      const ids = new Set(rows.map((r) => r.id));
      const all: MatrixRecord = { meta, rows: [...before.filter((r) => !ids.has(r.id)), ...rows].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id)) };
      writeFileSync(RECORD_JSON, `${JSON.stringify(all, null, 2)}\n`);
      writeFileSync(RECORD_MD, markdown(all));
      log(`recorded ${run.row.id} in ${RECORD_JSON} and ${RECORD_MD}`);
    };
    const run = await runMatrix({ cluster, settings, ...(only === undefined ? {} : { only }), log, onRow: record, after: (fn) => cleanups.push(fn) });
    process.stdout.write(renderMatrixTable(rows));
    return run.rows.every((r) => r.outcome.problems.length === 0) ? 0 : 1;
  } catch (err) {
    log(err instanceof Error ? err.stack ?? err.message : String(err));
    return 1;
  } finally {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        log(`cleanup: ${String(err)}`);
      }
    }
    if (ours) cli(['down']);
  }
}

if (import.meta.main) process.exitCode = await main();
