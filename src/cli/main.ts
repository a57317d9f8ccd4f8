#!/usr/bin/env node
// The nodepulse command. The only place that reads process globals, handles signals and calls
// process.exit; every subcommand is a function of (argv, io, signal) returning its exit code.
//
// Subcommands are imported lazily, so `nodepulse check` does not pay for the agent's
// dependencies and the agent does not pay for the fleet reader's.
//
// Installed as `kubectl-nodepulse` too, so `kubectl nodepulse fleet` works as a kubectl plugin.
import { SystemClock } from '../clock/clock.ts';
import type { CommandIo } from './command-io.ts';

const USAGE = `Usage: nodepulse <command> [flags]

Commands:
  agent       run the node agent (relist the runtime, renew the node's Lease)
  check       relist the node's runtime once and print what it holds
  demo        run the whole idea on this machine with a simulated runtime and API server
  fleet       read every node's agent Lease and say which nodes are fresh
  controller  mark Nodes whose agent went silent (leader-elected)
  cleanup     remove nodepulse's condition and taint from every Node, once its pods are gone
  verify      check that one agent answers /readyz and renews its Lease (helm test)
  version     print the version

Run 'nodepulse <command> --help' for a command's flags.
`;

type Command = (argv: string[], io: CommandIo, signal: AbortSignal) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  agent: async () => (await import('./agent-command.ts')).runAgentCommand,
  check: async () => (await import('./check-command.ts')).runCheck,
  demo: async () => (await import('./demo-command.ts')).runDemo,
  fleet: async () => (await import('./fleet-command.ts')).runFleet,
  controller: async () => (await import('./controller-command.ts')).runController,
  cleanup: async () => (await import('./cleanup-command.ts')).runCleanup,
  verify: async () => (await import('./verify-command.ts')).runVerify,
  version: async () => async (_argv, io) => {
    io.stdout.write(`nodepulse ${(await import('../version.ts')).VERSION}\n`);
    return 0;
  },
};

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (load === undefined) {
    process.stderr.write(`nodepulse: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return 2;
  }
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) process.exit(130); // a second signal means "now"
    controller.abort(new Error(`received ${sig}`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const io: CommandIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, clock: new SystemClock() };
  const command = await load();
  return command(rest, io, controller.signal);
}

main().then(
  (code) => {
    process.exitCode = code;
    // Exit once everything written has been flushed (a piped `fleet -o json` can be megabytes),
    // even if a stray handle lingers.
    process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  },
  (err: unknown) => {
    process.stderr.write(`nodepulse: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
