// The simulated CRI runtime as a process of its own (for the benchmark, the soak and the demo,
// so that its CPU is not counted as the agent's).
//
//   node src/stand-ins/cri-runtime/main.ts --socket PATH --pods N --containers-per-pod M
//        [--churn-per-second K] [--control 127.0.0.1:0] [--seed S] [--profile nodepulse-sim|cri-o]
//
// When it serves, it prints ONE JSON line on stdout and nothing else there:
//   {"socket":"/path/cri.sock","endpoint":"unix:///path/cri.sock","control":"http://127.0.0.1:PORT"}
// (`control` is null without --control; see sim-control.ts for its API). SIGTERM or SIGINT stop
// it cleanly: the socket is removed and it exits 0. Bad arguments: one line per problem on
// stderr, exit 2. A failure to start: one line on stderr, exit 1.
import { parseArgs } from 'node:util';
import { SystemClock } from '../../clock/clock.ts';
import { startSimControl, type SimControl } from './sim-control.ts';
import { SIM_PROFILE_NAMES, type SimProfileName } from './sim-profile.ts';
import { startSimRuntime } from './sim-runtime.ts';

interface Args {
  socket: string;
  pods: number;
  containersPerPod: number;
  churnPerSecond: number;
  seed: number;
  control: { host: string; port: number } | undefined;
  profile: SimProfileName;
}

function parse(argv: string[]): { args?: Args; problems: string[] } {
  const problems: string[] = [];
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        socket: { type: 'string' },
        pods: { type: 'string' },
        'containers-per-pod': { type: 'string' },
        'churn-per-second': { type: 'string' },
        control: { type: 'string' },
        seed: { type: 'string' },
        profile: { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (err) {
    return { problems: [(err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ')] };
  }
  const socket = values['socket'];
  if (socket === undefined || !socket.startsWith('/')) problems.push(`--socket: ${JSON.stringify(socket ?? '')} must be an absolute path`);
  const count = (name: string, fallback: number): number => {
    const text = values[name];
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) problems.push(`--${name}: ${JSON.stringify(text)} must be a whole number ≥ 0`);
    return n;
  };
  const pods = count('pods', 0);
  const containersPerPod = count('containers-per-pod', 1);
  const churnPerSecond = count('churn-per-second', 0);
  const seed = count('seed', 1);
  let control: Args['control'];
  const controlText = values['control'];
  if (controlText !== undefined) {
    const match = /^(127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})$/.exec(controlText);
    if (match === null) problems.push(`--control: ${JSON.stringify(controlText)} must be a loopback HOST:PORT, e.g. 127.0.0.1:0`);
    else control = { host: (match[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  }
  const profileText = values['profile'] ?? 'nodepulse-sim';
  const profile = SIM_PROFILE_NAMES.find((name) => name === profileText);
  if (profile === undefined) problems.push(`--profile: ${JSON.stringify(profileText)} must be one of ${SIM_PROFILE_NAMES.join(', ')}`);
  const args: Args = { socket: socket ?? '', pods, containersPerPod, churnPerSecond, seed, control, profile: profile ?? 'nodepulse-sim' };
  return problems.length > 0 ? { problems } : { args, problems };
}

async function main(): Promise<void> {
  const { args, problems } = parse(process.argv.slice(2));
  if (args === undefined) {
    for (const problem of problems) process.stderr.write(`cri-sim: ${problem}\n`);
    process.exit(2);
  }
  let control: SimControl | undefined;
  const sim = await startSimRuntime({
    socketPath: args.socket,
    pods: args.pods,
    containersPerPod: args.containersPerPod,
    churnPerSecond: args.churnPerSecond,
    seed: args.seed,
    profile: args.profile,
    clock: new SystemClock(),
  });
  try {
    if (args.control !== undefined) control = await startSimControl(sim, args.control);
  } catch (err) {
    await sim.close();
    throw err;
  }
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void Promise.all([control?.close(), sim.close()]).then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`cri-sim: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(`${JSON.stringify({ socket: sim.socketPath, endpoint: sim.endpoint, control: control?.url ?? null })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`cri-sim: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
