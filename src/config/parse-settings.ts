// Where a command's settings come from, and their one validation: each key takes its value from
// the first source that sets it (a flag, then its environment variables, then the agent's config
// file, then its default), and the whole merged object goes through the command's zod schema.
//
// An empty environment variable counts as unset: a downward-API field that resolved to nothing
// must not mask a default.
//
// Failure modes: none thrown for bad input; a schema that rejects the values yields a
// ConfigError whose cause is the ZodError (config-error.ts renders its lines).
import type { z } from 'zod/v3';
import { ConfigError, issueLines } from './config-error.ts';
import type { FlagSpec, Sourced } from './flag-grammar.ts';

export type SettingsResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ConfigError };

export type Env = Readonly<Record<string, string | undefined>>;

/** flag > env > file > default, per key of `specs`; a key no source sets is absent. */
export function mergeSources(
  specs: readonly FlagSpec[],
  flags: ReadonlyMap<string, Sourced>,
  env: Env,
  file: ReadonlyMap<string, Sourced> = new Map(),
): Map<string, Sourced> {
  const merged = new Map<string, Sourced>();
  for (const spec of specs) {
    const envName = spec.env.find((name) => (env[name] ?? '') !== '');
    const sourced =
      flags.get(spec.key) ??
      (envName === undefined ? undefined : { value: env[envName], source: envName }) ??
      file.get(spec.key) ??
      (spec.defaultText === undefined ? undefined : { value: spec.defaultText, source: 'default' });
    if (sourced !== undefined) merged.set(spec.key, sourced);
  }
  return merged;
}

/** Every key of `specs` (unset ones as undefined, so that a required key's rule runs) through `schema`. */
export function parseSettings<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, specs: readonly FlagSpec[], values: ReadonlyMap<string, Sourced>): SettingsResult<T> {
  const raw = Object.fromEntries(specs.map((spec) => [spec.key, values.get(spec.key)?.value]));
  const result = schema.safeParse(raw);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: new ConfigError(issueLines(result.error, values), { cause: result.error }) };
}
