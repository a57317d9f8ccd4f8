// Loads `nodepulse agent`'s config from its four sources, validates it once with the one schema
// (agent-config-schema.ts), and returns either AgentConfig or a ConfigError with one line per
// problem. It never throws and never exits: the CLI prints the lines to stderr and exits 2.
//
// Precedence, highest first (a key takes its value from the first source that sets it):
//   1. flags:    the grammar of every command (flag-grammar.ts): --relist-deadline 5m,
//                --relist-deadline=5m; the boolean --node-condition or --node-condition=false.
//                An unknown flag or a positional argument is an error, with a suggestion when a
//                known flag is close (-relist-deadline: did you mean --relist-deadline?).
//   2. env:      NODEPULSE_<UPPER_SNAKE_KEY> for every key, then NODE_NAME, POD_NAMESPACE,
//                CONTAINER_RUNTIME_ENDPOINT, KUBECONFIG. An empty variable counts as unset.
//                Unknown NODEPULSE_* variables are ignored, NOT errors: Kubernetes injects
//                service-link variables such as NODEPULSE_SERVICE_HOST and NODEPULSE_PORT into
//                pods in a namespace with a Service named nodepulse.
//   3. the file: --config FILE (or NODEPULSE_CONFIG), YAML or JSON (JSON is YAML), a mapping of
//                camelCase keys; an unknown key is an error. At most 1 MiB.
//   4. defaults: agent-config-keys.ts.
//
// Error lines read `key: value must be rule` (config-error.ts), e.g.
//   relistDeadline: 5m must be shorter than relistThreshold (1m0s)
//   relistPeriod: fast must be a duration such as 500ms, 10s or 3m (from --relist-period)
//   colour: blue must be a known key (in config file /etc/nodepulse/config.yaml)
// Problems with argv stop the load before the file is read; a file that cannot be read, parsed
// or shaped stops it before the values are judged. zod judges the file's shape and every value,
// and its ZodError is the ConfigError's cause. --help is the CLI's to answer (wantsHelp).
// The YAML parser is loaded only when a file is given (yaml-parser.ts).
import { z } from 'zod/v3';
import { agentConfigSchema, type AgentConfig } from './agent-config-schema.ts';
import { AGENT_CONFIG_KEYS, AGENT_CONFIG_SPECS, CONFIG_FILE_SPEC, PRINT_CONFIG_SPEC, type AgentConfigKey } from './agent-config-keys.ts';
import { ConfigError } from './config-error.ts';
import { parseFlags, suggest, type Sourced } from './flag-grammar.ts';
import { mergeSources, parseSettings, type Env } from './parse-settings.ts';
import { showValue } from './show-value.ts';
import { parseYaml } from './yaml-parser.ts';
import { filePath, goBool } from './value-schemas.ts';

export interface LoadAgentConfigInput {
  /** The arguments after `nodepulse agent`: no node binary, no script, no subcommand. */
  readonly argv: readonly string[];
  readonly env: Env;
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
  | { readonly ok: false; readonly error: ConfigError };

/** Largest config file read; a config is a few hundred bytes. */
export const MAX_CONFIG_FILE_BYTES = 1 << 20;
const COMMAND = 'nodepulse agent';
/** The command's own flags, which are not config keys. */
const COMMAND_SPECS = [CONFIG_FILE_SPEC, PRINT_CONFIG_SPEC];
const commandSchema = z.object({ config: filePath.optional(), printConfig: goBool });
/** The file's shape: a mapping whose keys are config keys; the values are the agent schema's. */
const fileSchema = z.object(Object.fromEntries(AGENT_CONFIG_KEYS.map((key) => [key, z.unknown()]))).strict();

export function loadAgentConfig(input: LoadAgentConfigInput): LoadAgentConfigResult {
  try {
    return load(input);
  } catch (err) {
    // Only a bug here can reach this; the promise "never throws" holds even then.
    const line = `config: internal error while loading (${err instanceof Error ? err.message : String(err)})`;
    return { ok: false, error: new ConfigError([line], { cause: err }) };
  }
}

function load(input: LoadAgentConfigInput): LoadAgentConfigResult {
  const flags = parseFlags(input.argv, [...AGENT_CONFIG_SPECS, ...COMMAND_SPECS], COMMAND);
  if (flags.errors.length > 0) return { ok: false, error: new ConfigError(flags.errors) };
  const command = parseSettings(commandSchema, COMMAND_SPECS, mergeSources(COMMAND_SPECS, flags.values, input.env));
  if (!command.ok) return command;

  let file: ReadonlyMap<string, Sourced> = new Map();
  if (command.value.config !== undefined) {
    const read = readConfigFile(command.value.config, input.readFile);
    if (!read.ok) return read;
    file = read.value;
  }

  const merged = mergeSources(AGENT_CONFIG_SPECS, flags.values, input.env, file);
  const result = parseSettings(agentConfigSchema, AGENT_CONFIG_SPECS, merged);
  if (!result.ok) return result;
  const sources = Object.fromEntries(AGENT_CONFIG_KEYS.map((key) => [key, merged.get(key)?.source ?? 'default'])) as Record<AgentConfigKey, string>;
  return { ok: true, config: result.value, printConfig: command.value.printConfig, sources };
}

type FileRead = { readonly ok: true; readonly value: ReadonlyMap<string, Sourced> } | { readonly ok: false; readonly error: ConfigError };

function readConfigFile(path: string, readFile: (path: string) => string): FileRead {
  const source = `config file ${path}`;
  const failed = (must: string, cause?: unknown): FileRead => ({ ok: false, error: new ConfigError([`config: ${showValue(path)} must ${must}`], { cause }) });
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    return failed(`be a readable file (${err instanceof Error ? err.message : String(err)})`, err);
  }
  if (text.length > MAX_CONFIG_FILE_BYTES) return failed(`be at most ${MAX_CONFIG_FILE_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    // The parser's message carries a code frame on further lines; the first line says it all.
    return failed(`be valid YAML or JSON (${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''})`, err);
  }
  if (doc === null || doc === undefined) return { ok: true, value: new Map() };
  const shaped = fileSchema.safeParse(doc);
  if (!shaped.success) {
    const unknown = shaped.error.issues.flatMap((issue) => (issue.code === z.ZodIssueCode.unrecognized_keys ? issue.keys : []));
    if (unknown.length === 0) return failed('hold a mapping of camelCase keys', shaped.error);
    const entries = doc as Record<string, unknown>;
    const lines = unknown.map((key) => {
      const near = suggest(key, AGENT_CONFIG_KEYS);
      return `${key}: ${showValue(entries[key])} must be a known key (in ${source}${near === undefined ? '' : `; did you mean ${near}?`})`;
    });
    return { ok: false, error: new ConfigError(lines, { cause: shaped.error }) };
  }
  return { ok: true, value: new Map(Object.entries(shaped.data).filter(([, v]) => v !== undefined).map(([key, value]) => [key, { value, source }])) };
}
