// Holds a benchmark containerd node (110 pods × 3 containers unless --pods) for measurements
// made by hand: prints its socket on stdout, then waits for SIGTERM or SIGINT, empties the node
// and stops containerd.
//
//   node bench/hold-containerd.ts [--pods 110]
import { parseArgs } from 'node:util';
import { SystemClock } from '../src/clock/clock.ts';
import { emptyNode, fillNode, startBenchContainerd } from './containerd-node.ts';

const clock = new SystemClock();
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const { values } = parseArgs({ options: { pods: { type: 'string', default: '110' } }, strict: true });
const pods = Number(values.pods);
if (!Number.isInteger(pods) || pods < 0) throw new Error(`--pods: ${values.pods} must be a whole number`);
const fixture = await startBenchContainerd(clock);
try {
  await fillNode(fixture, { pods, containersPerPod: 3, clock, log });
  process.stdout.write(`${fixture.endpoint}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await emptyNode(fixture, { clock, log });
} finally {
  await fixture.close();
}
