// Every command a built `nodepulse` lists, run: for the bundle (test/package/bundle.test.ts) and
// for each architecture's image (test/e2e/agent-image*.test.ts), whatever runs it (a Node of this
// machine, a chroot, qemu-user). The list comes from `nodepulse --help` itself, so a command added
// to src/cli/main.ts is checked without being named here.
import assert from 'node:assert/strict';
import type { ToolRun } from './run-tool.ts';

/** Commands that must be there whatever else is: the ones the image is for. */
const REQUIRED_COMMANDS = ['agent', 'check', 'fleet', 'controller', 'version'];

/**
 * Every command `nodepulse --help` lists answers its own --help, and `version` prints the
 * package's version. `nodepulse` runs the CLI with the given arguments. Returns the commands.
 */
export async function checkEveryCommand(nodepulse: (args: readonly string[]) => Promise<ToolRun>, version: string): Promise<string[]> {
  const help = await nodepulse(['--help']);
  assert.equal(help.code, 0, `nodepulse --help: ${help.stderr}`);
  const commands = [...(help.stdout.split('Commands:')[1] ?? '').matchAll(/^ {2}(\w+) /gm)].map((m) => m[1] as string);
  for (const expected of REQUIRED_COMMANDS) assert.ok(commands.includes(expected), `precondition: --help lists ${expected}: ${commands.join(', ')}`);
  for (const command of commands) {
    const run = await nodepulse([command, '--help']);
    assert.equal(run.code, 0, `nodepulse ${command} --help: ${run.stderr}`);
    if (command === 'version') assert.equal(run.stdout, `nodepulse ${version}\n`);
    else assert.match(run.stdout, new RegExp(`^Usage: nodepulse ${command}\\b`), `nodepulse ${command} --help`);
  }
  return commands;
}
