// Loads `nodepulse agent`'s config from its four sources, validates it once with the one schema
// (agent-config-schema.ts), and either returns AgentConfig or one line per problem. It never
// throws and never exits: the CLI prints the lines to stderr and exits 2.
//
// Precedence, highest first (a key takes its value from the first source that sets it):
//   1. flags:    --relist-deadline 5m, --relist-deadline=5m; booleans --node-condition or
//                --node-condition=false (a boolean takes its value only after `=`, as Go's flag).
//                The last of a repeated flag wins. An unknown flag or a positional argument is an
//                error, with a suggestion when a known flag is close.
//   2. env:      NODEPULSE_<UPPER_SNAKE_KEY> for every key, then NODE_NAME, POD_NAMESPACE,
//                CONTAINER_RUNTIME_ENDPOINT, KUBECONFIG. An empty variable counts as unset (a
//                downward-API field that resolved to nothing must not mask a default). Unknown
//                NODEPULSE_* variables are ignored, NOT errors: Kubernetes injects service-link
//                variables such as NODEPULSE_SERVICE_HOST and NODEPULSE_PORT into pods in a
//                namespace with a Service named nodepulse.
//   3. the file: --config FILE (or NODEPULSE_CONFIG), YAML or JSON (JSON is YAML), a mapping of
//                camelCase keys; an unknown key is an error. At most 1 MiB.
//   4. defaults: agent-config-keys.ts.
//
// Error lines read `key: value must be rule`, e.g.
//   relistDeadline: 5m must be shorter than relistThreshold (3m0s)
//   nodeName: "" must be set (--node-name or NODE_NAME)
//   relistPeriod: fast must be a duration such as 500ms, 10s or 3m (from --relist-period)
// A single key's error names where its value came from; a cross-field error names the other key
// and its value instead. Values are shown as given, quoted when empty or not a plain token, and
// cut at 80 characters so that a pasted blob cannot flood the terminal.
import { parse as parseYaml } from 'yaml';
import { validateAgentConfig, type AgentConfig, type AgentConfigIssue, type RawAgentConfig } from './agent-config-schema.ts';
import { AGENT_CONFIG_SPECS, isAgentConfigKey, type AgentConfigKey } from './agent-config-keys.ts';

export interface LoadAgentConfigInput {
  /** The arguments after `nodepulse agent`: no node binary, no script, no subcommand. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Reads the --config file as UTF-8 text; may throw (the error becomes a line). */
  readonly readFile: (path: string) => string;
}

export type LoadAgentConfigResult =
  | {
      readonly ok: true;
      readonly config: AgentConfig;
      /** --print-config was given: print printableConfig(config) and exit 0. */
      readonly printConfig: boolean;
      /** Where each key's value came from: a flag, a variable, `config file PATH`, or `default`. */
      readonly sources: Readonly<Record<AgentConfigKey, string>>;
    }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Largest config file read; a config is a few hundred bytes. */
export const MAX_CONFIG_FILE_BYTES = 1 << 20;
const MAX_SHOWN_CHARS = 80;
const CONFIG_FLAG = '--config';
const PRINT_CONFIG_FLAG = '--print-config';
const CONFIG_ENV = 'NODEPULSE_CONFIG';

interface Sourced {
  readonly value: unknown;
  readonly source: string;
}

export function loadAgentConfig(input: LoadAgentConfigInput): LoadAgentConfigResult {
  try {
    return load(input);
  } catch (err) {
    // Only a bug here can reach this; the promise "never throws" holds even then.
    return { ok: false, errors: [`config: internal error while loading (${err instanceof Error ? err.message : String(err)})`] };
  }
}

function load(input: LoadAgentConfigInput): LoadAgentConfigResult {
  const errors: string[] = [];
  const flags = parseFlags(input.argv, errors);
  const merged = new Map<AgentConfigKey, Sourced>();

  for (const spec of AGENT_CONFIG_SPECS) {
    const flagValue = flags.values.get(spec.key);
    if (flagValue !== undefined) {
      merged.set(spec.key, { value: flagValue, source: spec.flag });
      continue;
    }
    const envName = spec.env.find((name) => (input.env[name] ?? '') !== '');
    if (envName !== undefined) merged.set(spec.key, { value: input.env[envName], source: envName });
  }

  const configPath = flags.configPath ?? nonEmpty(input.env[CONFIG_ENV]);
  if (configPath !== undefined) {
    for (const [key, sourced] of readConfigFile(configPath, input.readFile, errors)) {
      if (!merged.has(key)) merged.set(key, sourced);
    }
  }

  for (const spec of AGENT_CONFIG_SPECS) {
    if (!merged.has(spec.key) && spec.defaultText !== undefined) merged.set(spec.key, { value: spec.defaultText, source: 'default' });
  }

  if (errors.length > 0) return { ok: false, errors };

  // Every key is present, unset ones as undefined, so that a required key's rule runs.
  const raw = Object.fromEntries(AGENT_CONFIG_SPECS.map((spec) => [spec.key, merged.get(spec.key)?.value])) as RawAgentConfig;
  const result = validateAgentConfig(raw);
  if (!result.ok) return { ok: false, errors: result.issues.map((issue) => renderIssue(issue, merged)) };

  const sources = {} as Record<AgentConfigKey, string>;
  for (const spec of AGENT_CONFIG_SPECS) sources[spec.key] = merged.get(spec.key)?.source ?? 'default';
  return { ok: true, config: result.config, printConfig: flags.printConfig, sources };
}

interface ParsedFlags {
  readonly values: Map<AgentConfigKey, string>;
  readonly configPath: string | undefined;
  readonly printConfig: boolean;
}

function parseFlags(argv: readonly string[], errors: string[]): ParsedFlags {
  const values = new Map<AgentConfigKey, string>();
  let configPath: string | undefined;
  let printConfig = false;
  const byFlag = new Map(AGENT_CONFIG_SPECS.map((s) => [s.flag, s]));
  const known = [...byFlag.keys(), CONFIG_FLAG, PRINT_CONFIG_FLAG];

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    if (!token.startsWith('-') || token === '-' || token === '--') {
      errors.push(`argument: ${show(token)} must be a flag (nodepulse agent takes no positional arguments)`);
      continue;
    }
    // Go's flag package accepts -flag as well as --flag.
    const eq = token.indexOf('=');
    const name = `--${(eq < 0 ? token : token.slice(0, eq)).replace(/^--?/, '')}`;
    let value: string | undefined = eq < 0 ? undefined : token.slice(eq + 1);
    const spec = byFlag.get(name);

    if (name === PRINT_CONFIG_FLAG || spec?.boolean === true) {
      if (name === PRINT_CONFIG_FLAG) {
        if (value !== undefined) errors.push(`flag: ${show(token)} must be given without a value`);
        else printConfig = true;
      } else if (spec !== undefined) values.set(spec.key, value ?? 'true');
      continue;
    }
    if (spec === undefined && name !== CONFIG_FLAG) {
      const near = suggest(name, known);
      errors.push(`flag: ${show(name)} must be a flag of nodepulse agent${near === undefined ? '' : ` (did you mean ${near}?)`}`);
      // Its value, if it has one, is not a second problem to report.
      if (eq < 0 && argv[i + 1] !== undefined && !(argv[i + 1] ?? '').startsWith('-')) i++;
      continue;
    }
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next.length > 1)) {
        errors.push(`flag: ${name} must be followed by a value`);
        continue;
      }
      value = next;
      i++;
    }
    if (spec === undefined) configPath = value;
    else values.set(spec.key, value);
  }
  return { values, configPath, printConfig };
}

function readConfigFile(path: string, readFile: (path: string) => string, errors: string[]): Array<[AgentConfigKey, Sourced]> {
  const source = `config file ${path}`;
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    errors.push(`config: ${show(path)} must be a readable file (${err instanceof Error ? err.message : String(err)})`);
    return [];
  }
  if (text.length > MAX_CONFIG_FILE_BYTES) {
    errors.push(`config: ${show(path)} must be at most ${MAX_CONFIG_FILE_BYTES} bytes`);
    return [];
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    errors.push(`config: ${show(path)} must be valid YAML or JSON (${why})`);
    return [];
  }
  if (doc === null || doc === undefined) return [];
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    errors.push(`config: ${show(path)} must hold a mapping of camelCase keys`);
    return [];
  }
  const out: Array<[AgentConfigKey, Sourced]> = [];
  for (const [key, value] of Object.entries(doc)) {
    if (isAgentConfigKey(key)) {
      out.push([key, { value, source }]);
      continue;
    }
    const near = suggest(key, AGENT_CONFIG_SPECS.map((s) => s.key));
    errors.push(`${key}: ${show(value)} must be a known key (in ${source}${near === undefined ? '' : `; did you mean ${near}?`})`);
  }
  return out;
}

/** `key: value must be rule`; a single key's line names its source, a cross-field one shows its own value. */
function renderIssue(issue: AgentConfigIssue, merged: ReadonlyMap<AgentConfigKey, Sourced>): string {
  if (issue.shown !== undefined) return `${issue.key}: ${issue.shown} must be ${issue.rule}`;
  const sourced = merged.get(issue.key);
  const from = sourced === undefined || sourced.source === 'default' ? '' : ` (from ${sourced.source})`;
  return `${issue.key}: ${show(sourced?.value)} must be ${issue.rule}${from}`;
}

/** A value as a message shows it: plain tokens as they are, anything else quoted. */
function show(value: unknown): string {
  let out: string;
  if (value === undefined) out = '""';
  else if (typeof value === 'string') out = /^[\w.:/[\]@+%=-]+$/.test(value) ? value : JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out = String(value);
  else out = JSON.stringify(value) ?? String(value);
  return out.length > MAX_SHOWN_CHARS ? `${out.slice(0, MAX_SHOWN_CHARS - 1)}…` : out;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** The closest known name within two edits (case-insensitive), if any. */
function suggest(name: string, known: readonly string[]): string | undefined {
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
