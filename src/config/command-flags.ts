// A command's flags, end to end: argv read by the one grammar (flag-grammar.ts), each key's value
// taken from its flag, then its environment variables, then its default (parse-settings.ts), and
// the whole set validated by the command's zod schema. fleet, controller, check and demo declare
// a CommandDefinition and call parseCommandFlags; the agent adds its config file on the same parts
// (load-agent-config.ts). flagsHelp writes the flags part of every command's --help from the same
// specs, so the help cannot list a flag the parser does not take.
//
// Failure modes: bad argv or a bad value is a ConfigError (exit 2 at the CLI), never a throw.
// Grammar problems stop before the schema runs: a value cut off from its flag would otherwise
// come back as a second, misleading line.
import type { z } from 'zod/v3';
import { ConfigError } from './config-error.ts';
import { parseFlags, type FlagSpec } from './flag-grammar.ts';
import { mergeSources, parseSettings, type Env } from './parse-settings.ts';

export interface CommandDefinition<T> {
  /** As errors name it: `nodepulse fleet`. */
  readonly name: string;
  /** The whole --help text (its flags part from flagsHelp). */
  readonly usage: string;
  readonly specs: readonly FlagSpec[];
  /** Every key of `specs` in, the command's flags out. */
  readonly schema: z.ZodType<T, z.ZodTypeDef, unknown>;
}

export type CommandFlags<T> = { readonly help: true } | { readonly flags: T } | { readonly error: ConfigError };

export function parseCommandFlags<T>(argv: readonly string[], env: Env, command: CommandDefinition<T>): CommandFlags<T> {
  const parsed = parseFlags(argv, command.specs, command.name);
  if (parsed.help) return { help: true };
  if (parsed.errors.length > 0) return { error: new ConfigError(parsed.errors) };
  const result = parseSettings(command.schema, command.specs, mergeSources(command.specs, parsed.values, env));
  return result.ok ? { flags: result.value } : { error: result.error };
}

/** Where a command prints: its help to stdout, its error lines to stderr. */
export interface CommandStreams {
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
  readonly env: Env;
}

/**
 * The flags, or the exit code once the command's help (0) or its error lines (2) are printed:
 * what every command does first.
 */
export function flagsOrExit<T>(argv: readonly string[], io: CommandStreams, command: CommandDefinition<T>): { readonly flags: T } | { readonly exit: number } {
  const parsed = parseCommandFlags(argv, io.env, command);
  if ('help' in parsed) {
    io.stdout.write(command.usage);
    return { exit: 0 };
  }
  if ('error' in parsed) {
    for (const line of parsed.error.lines) io.stderr.write(`${line}\n`);
    return { exit: 2 };
  }
  return parsed;
}

/** How every command's --help ends: the grammar, in two sentences. */
export const GRAMMAR_HELP = [
  'Flags are written --flag=value or --flag value (a value that starts with "-" needs the "="); a',
  'boolean is --flag or --flag=false. The last of a repeated flag wins. -h or --help prints this help.',
].join('\n');

/** One entry per flag: its form, then its help with the default and the variables it reads. */
export function flagsHelp(specs: readonly FlagSpec[]): string {
  const lines: string[] = [];
  for (const spec of specs) {
    const value = spec.boolean ? '[=true|false]' : ` ${spec.placeholder ?? 'VALUE'}`;
    const notes = [
      ...(spec.defaultText === undefined ? [] : [`default ${spec.defaultText}`]),
      ...(spec.env.length === 0 ? [] : [`env ${spec.env.join(', ')}`]),
    ];
    lines.push(`  ${spec.short === undefined ? '    ' : `-${spec.short}, `}${spec.flag}${value}`);
    lines.push(`        ${spec.help}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}`);
  }
  return `${lines.join('\n')}\n`;
}
