// The error every command stops on when a setting is wrong: one line per problem, in the form
// `key: value must be rule`, which the CLI prints to stderr before it exits 2.
//
// A line about a single value names where it came from:
//   relistPeriod: fast must be a duration such as 500ms, 10s or 3m (from --relist-period)
//   nodeName: "" must be set (--node-name or NODE_NAME)
// A cross-field line shows the value its rule reads and names the other key instead:
//   relistDeadline: 5m must be shorter than relistThreshold (1m0s)
//
// When zod found the problems, the ZodError is the cause, with every issue as zod reported it.
// Of the issues at one key, the line shows the first (the value's own rules run in order: type,
// then form, then range), except cross-field ones, which are all shown.
import type { ZodError } from 'zod/v3';
import type { Sourced } from './flag-grammar.ts';
import { showValue } from './show-value.ts';

export class ConfigError extends Error {
  readonly code = 'config_invalid';
  /** One `key: value must be rule` line per problem. */
  readonly lines: readonly string[];

  constructor(lines: readonly string[], options?: { cause?: unknown }) {
    super(lines.join('\n'), options);
    this.name = 'ConfigError';
    this.lines = lines;
  }
}

/** What a cross-field issue carries in its params: the value as its line shows it. */
export interface ShownParams {
  readonly shown: string;
}

/** The lines of a ZodError over values keyed as `values` is (each with its source). */
export function issueLines(error: ZodError, values: ReadonlyMap<string, Sourced>): string[] {
  const lines: string[] = [];
  const done = new Set<string>();
  for (const issue of error.issues) {
    const key = String(issue.path[0] ?? 'config');
    const shown: unknown = issue.code === 'custom' ? (issue.params as Partial<ShownParams> | undefined)?.shown : undefined;
    if (typeof shown === 'string') {
      lines.push(`${key}: ${shown} must be ${issue.message}`);
      continue;
    }
    if (done.has(key)) continue;
    done.add(key);
    const sourced = values.get(key);
    const from = sourced === undefined || sourced.source === 'default' ? '' : ` (from ${sourced.source})`;
    lines.push(`${key}: ${showValue(sourced?.value)} must be ${issue.message}${from}`);
  }
  return lines;
}
