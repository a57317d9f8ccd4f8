// The one flag grammar of every nodepulse command (agent, check, demo, fleet, controller): the
// grammar kubectl users already type, spf13/pflag's. This module only reads argv; what a valid
// value is, is each command's zod schema's business.
//
// | written                         | means                                                     |
// |---------------------------------|-----------------------------------------------------------|
// | --flag=value                    | value                                                     |
// | --flag value                    | value: the next argument, unless it starts with '-'       |
// | -o json, -o=json, -ojson        | a one-letter shorthand, where the command has one (-o)    |
// | --bool                          | true                                                      |
// | --bool=false                    | false: a boolean takes a value only after '=', as pflag's |
// | -h, --help                      | the command's help (exit 0), wherever it stands           |
// | --                              | the end of the flags                                      |
//
// A flag given twice: the last one wins. No command takes positional arguments.
//
// Where this differs from pflag, it is to say more: pflag takes any next argument as a value, so
// `--grace --watch` would read the grace as "--watch"; here a missing value is its own error, and
// a value that starts with '-' is written after '='. Go's single-dash long form (-node-name),
// which pflag would read as a run of shorthands, is an unknown flag with the double-dash spelling
// suggested.
//
// Failure modes: each problem is one line in the `key: value must be rule` form, and parsing goes
// on past it, so every problem in argv is reported at once:
//   flag: --relist-deadlin must be a flag of nodepulse agent (did you mean --relist-deadline?)
//   flag: --grace must be followed by a value
//   argument: extra must be a flag (nodepulse fleet takes no positional arguments)
import { showValue } from './show-value.ts';

/** One flag of a command: the grammar reads `flag` and `short`; help and the loaders read the rest. */
export interface FlagSpec {
  /** The key in error lines and in the command's schema: the flag in camelCase (--lease-namespace → leaseNamespace). */
  readonly key: string;
  /** The long form, `--lease-namespace`. */
  readonly flag: string;
  /** A one-letter shorthand without its dash (`o` for -o), where kubectl has one. */
  readonly short?: string;
  /** `--flag` alone means true; a value needs `=`. */
  readonly boolean: boolean;
  /** How --help names the value: `DURATION`, `table|json`. */
  readonly placeholder?: string;
  /** Environment variables read when the flag is not given, highest precedence first. */
  readonly env: readonly string[];
  /** The default, as a person would write it; undefined: unset, derived or required (see help). */
  readonly defaultText: string | undefined;
  readonly help: string;
}

/** A flag that takes a value; `key` is the flag in camelCase. */
export function valueFlag(flag: string, placeholder: string, defaultText: string | undefined, help: string, more: { short?: string; env?: readonly string[] } = {}): FlagSpec {
  return { key: camelKey(flag), flag, boolean: false, placeholder, env: more.env ?? [], defaultText, help, ...(more.short === undefined ? {} : { short: more.short }) };
}

/** A boolean flag, false unless given. */
export function booleanFlag(flag: string, help: string): FlagSpec {
  return { key: camelKey(flag), flag, boolean: true, env: [], defaultText: 'false', help };
}

/** --lease-namespace → leaseNamespace. */
function camelKey(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A value and where it came from: `--grace`, `-o`, `POD_NAME`, `config file /etc/x.yaml`, `default`. */
export interface Sourced {
  readonly value: unknown;
  readonly source: string;
}

export interface ParsedFlags {
  /** The last value given for each key, with the flag as written. */
  readonly values: ReadonlyMap<string, Sourced>;
  readonly help: boolean;
  /** One `key: value must be rule` line per problem, in argv order. */
  readonly errors: readonly string[];
}

/** Whether argv asks for help: -h or --help anywhere before `--`. */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((token) => token === '-h' || token === '--help');
}

/** Reads argv by the grammar above; `command` (`nodepulse fleet`) names the command in errors. */
export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[], command: string): ParsedFlags {
  const byLong = new Map(specs.map((s) => [s.flag, s]));
  const byShort = new Map(specs.flatMap((s) => (s.short === undefined ? [] : [[s.short, s] as const])));
  const values = new Map<string, Sourced>();
  const errors: string[] = [];

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    if (token === '--') {
      for (const rest of argv.slice(i + 1)) errors.push(positional(rest, command));
      break;
    }
    if (token === '-h' || token === '--help') continue;
    if (!token.startsWith('-') || token === '-') {
      errors.push(positional(token, command));
      continue;
    }
    const written = splitFlag(token, byShort);
    if (written.name === '--help' || written.name === '-h') {
      errors.push(`flag: ${showValue(token)} must be given without a value`);
      continue;
    }
    const spec = written.long ? byLong.get(written.name) : byShort.get(written.name.slice(1));
    if (spec === undefined) {
      const near = suggest(`--${written.name.replace(/^--?/, '')}`, [...byLong.keys()]);
      errors.push(`flag: ${showValue(written.name)} must be a flag of ${command}${near === undefined ? '' : ` (did you mean ${near}?)`}`);
      // Its value, if it has one, is not a second problem to report.
      if (written.value === undefined && isValue(argv[i + 1])) i++;
      continue;
    }
    let value = written.value;
    if (value === undefined && spec.boolean) value = 'true';
    if (value === undefined) {
      const next = argv[i + 1];
      if (!isValue(next)) {
        errors.push(`flag: ${written.name} must be followed by a value`);
        continue;
      }
      value = next;
      i++;
    }
    values.set(spec.key, { value, source: written.name });
  }
  return { values, help: wantsHelp(argv), errors };
}

interface WrittenFlag {
  /** As written, without any value: `--grace`, `-o`. */
  readonly name: string;
  readonly long: boolean;
  readonly value: string | undefined;
}

/** `--name=value`, `--name`, `-o=value`, `-ovalue` (for a known shorthand), `-o`. */
function splitFlag(token: string, byShort: ReadonlyMap<string, FlagSpec>): WrittenFlag {
  const eq = token.indexOf('=');
  if (token.startsWith('--')) {
    return { name: eq < 0 ? token : token.slice(0, eq), long: true, value: eq < 0 ? undefined : token.slice(eq + 1) };
  }
  const letter = token.slice(1, 2);
  const rest = token.slice(2);
  if (rest === '') return { name: token, long: false, value: undefined };
  if (rest.startsWith('=')) return { name: `-${letter}`, long: false, value: rest.slice(1) };
  // `-ojson` is -o with a value; `-node-name` is no shorthand, and is reported whole.
  if (byShort.get(letter)?.boolean === false) return { name: `-${letter}`, long: false, value: rest };
  return { name: eq < 0 ? token : token.slice(0, eq), long: false, value: eq < 0 ? undefined : token.slice(eq + 1) };
}

function isValue(next: string | undefined): next is string {
  return next !== undefined && !(next.startsWith('-') && next.length > 1);
}

function positional(token: string, command: string): string {
  return `argument: ${showValue(token)} must be a flag (${command} takes no positional arguments)`;
}

/** The closest known name within two edits (case-insensitive), if any. */
export function suggest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next.push(Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + cost));
    }
    row = next;
  }
  return row[b.length] ?? 0;
}
