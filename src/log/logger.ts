// Structured logs: pino JSON to stdout (or an injected sink in tests).
//
// Messages are constant strings starting with a capital letter; details go in lowerCamelCase
// keys and errors under `err`. Log at a loop's boundary, once per change of state; never per
// tick at info. The time function is injected so that tests get stable output.
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Where lines go; stdout when omitted. */
  readonly destination?: DestinationStream;
  /** Returns the `,"time":…` fragment pino appends; pino's epoch time when omitted. */
  readonly time?: () => string;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { name: 'nodepulse' },
      ...(options.time === undefined ? {} : { timestamp: options.time }),
      // A bearer token must never reach a log line, whatever object is logged.
      redact: { paths: ['token', '*.token', 'headers.authorization', '*.headers.authorization', 'authorization'], censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A sink for tests: collects every line, parsed. */
export function memorySink(): DestinationStream & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return {
    lines,
    write(chunk: string): void {
      for (const line of chunk.split('\n')) if (line.length > 0) lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
}
