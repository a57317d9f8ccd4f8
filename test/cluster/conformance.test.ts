// The API stand-in kept honest by the real API server: the conformance table
// (conformance-table.ts), every request the product sends, run against the test cluster's
// kube-apiserver and against the stand-in, and the two observations compared row by row.
//
// | test                                             | needs              | fails when                                   |
// |--------------------------------------------------|--------------------|----------------------------------------------|
// | each row sends the product requests it declares  | the stand-in only  | a row's declared request was not sent (its   |
// |                                                  |                    | `sends` would vouch for a request untried)   |
// | the real server answers each row as the table    | the test cluster   | the real server's answer (as the product     |
// | expects                                          |                    | reads it) is not the row's `expect`          |
// | the stand-in answers each row as the real server | both               | any field of the two observations differs    |
// | does                                             |                    | (conformance-read.ts says which fields)      |
// | docs/reliability.md counts the rows              | nothing            | its counts differ from the table's           |
//
// The table runs once per server and per file run; both runs use the same names (np-conf-<run>-…)
// so names in the answers compare. Under CI=true a missing cluster fails (shared-cluster.ts);
// elsewhere the tests that need it are skipped with the reason, and the stand-in's still runs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { RecordedRequest } from '../../src/stand-ins/api-server/request-log.ts';
import { RvLabels, type Observation } from './conformance-read.ts';
import { requestSignature, rowClock, ROWS, type Row, type RowContext } from './conformance-table.ts';
import { realTarget, standInTarget, type Target } from './conformance-targets.ts';
import { sharedCluster } from './shared-cluster.ts';

const RUN = randomBytes(3).toString('hex').slice(0, 5);
const NAMESPACE = `np-conf-${RUN}`;

interface RowResult {
  readonly observation: Observation;
  /** The requests the row sent, as signatures (stand-in only: from its request record). */
  readonly sent: ReadonlySet<string>;
  readonly notes: readonly string[];
}

/** The stand-in's record of what a row sent: marked at the row's start, read when it has run (before its cleanup). */
interface RowRecord {
  mark(): void;
  sent(): readonly RecordedRequest[];
}

async function runRow(target: Target, row: Row, index: number, record?: RowRecord): Promise<RowResult> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const notes: string[] = [];
  const ctx: RowContext = {
    target,
    namespace: NAMESPACE,
    clock: rowClock(),
    rv: new RvLabels(),
    client: (as) => target.client(as),
    name: (what) => `np-conf-${RUN}-${index}-${what}`,
    defer: (cleanup) => cleanups.push(cleanup),
    note: (text) => notes.push(text),
  };
  record?.mark();
  try {
    const observation = await row.run(ctx);
    const sent = new Set((record?.sent() ?? []).map(requestSignature));
    return { observation, sent, notes };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await target.sweep();
  }
}

/** Every row against one server, in order; a row that throws (a failed precondition) fails the run. */
async function runTable(target: Target, record?: RowRecord): Promise<RowResult[]> {
  const results: RowResult[] = [];
  for (const [index, row] of ROWS.entries()) {
    try {
      results.push(await runRow(target, row, index, record));
    } catch (err) {
      throw new Error(`${target.name}: row "${row.name}": ${(err as Error).message}`, { cause: err });
    }
  }
  return results;
}

let standInRun: Promise<RowResult[]> | undefined;

/** The table against a fresh stand-in, once per file run. */
function standInResults(): Promise<RowResult[]> {
  standInRun ??= (async () => {
    const target = await standInTarget(NAMESPACE);
    try {
      let seq = 0;
      return await runTable(target, {
        mark: () => {
          seq = target.server.requests.lastSeq();
        },
        sent: () => target.server.requests.since(seq),
      });
    } finally {
      await target.close();
    }
  })();
  return standInRun;
}

const show = (o: Observation): string => JSON.stringify(o, null, 1);

test('each row of the conformance table sends the product requests it declares (on the stand-in)', async () => {
  const results = await standInResults();
  const problems: string[] = [];
  for (const [i, row] of ROWS.entries()) {
    const sent = results[i]?.sent ?? new Set<string>();
    for (const s of row.sends) if (!sent.has(s)) problems.push(`"${row.name}" declares ${s} but sent only: ${[...sent].join('; ')}`);
  }
  assert.deepEqual(problems, []);
});

test('docs/reliability.md counts the table\'s rows as the table holds them', () => {
  const doc = readFileSync('docs/reliability.md', 'utf8');
  const kind = (row: Row): string => (row.sends.some((s) => s.includes('/leases')) ? 'Leases' : row.sends.some((s) => s.includes('/nodes')) ? 'Nodes' : 'others');
  const counted = (label: string): number => ROWS.filter((row) => kind(row) === label).length;
  for (const label of ['Leases', 'Nodes', 'others']) {
    const written = new RegExp(`^\\| (\\d+) (?:on )?${label} \\|`, 'm').exec(doc)?.[1];
    assert.equal(Number(written), counted(label), `docs/reliability.md: rows ${label}`);
  }
});

test('the stand-in answers every row of the conformance table as the real API server does', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined) return;
  const real = await realTarget(cluster, NAMESPACE);
  let realResults: RowResult[];
  try {
    realResults = await runTable(real);
  } finally {
    await real.close();
  }
  const standIn = await standInResults();
  for (const [i, row] of ROWS.entries()) {
    await t.test(row.name, (st) => {
      for (const note of realResults[i]?.notes ?? []) st.diagnostic(`${real.name}: ${note}`);
      for (const note of standIn[i]?.notes ?? []) st.diagnostic(`stand-in: ${note}`);
      const r = realResults[i]?.observation;
      const s = standIn[i]?.observation;
      assert.ok(r !== undefined && s !== undefined, 'precondition: both servers ran the row');
      assert.deepEqual(r.outcome, row.expect, `${real.name} must answer as the table expects; it answered:\n${show(r)}`);
      assert.deepEqual(s, r, `the stand-in must answer as ${real.name} does\n--- ${real.name}:\n${show(r)}\n--- stand-in:\n${show(s)}`);
    });
  }
});
