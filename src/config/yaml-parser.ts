// The YAML parser the agent's config file is read with, loaded the first time a file is read:
// most agents are given none, and a module once loaded stays resident for the agent's life
// (docs/bench.md measures yaml's cost).
//
// How it is loaded, synchronously, in both ways the agent runs:
//   - from dist/ with node_modules (the package): Node's ES modules have no `require`, so one is
//     made for this module (createRequire), which finds yaml in node_modules;
//   - from the image's bundle (scripts/bundle.ts): the bundler sees the plain `require('yaml')`
//     below, puts yaml in the bundle and runs it only when this call is made; every chunk of the
//     bundle has a `require`, so that branch is the one taken. (A dynamic import would make
//     loading the config asynchronous; a createRequire call alone is one a bundler cannot
//     follow, and the bundled agent would fail on its first config file.)
// test/package/bundle.test.ts reads a config file with the bundle, with no node_modules in reach.
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

/** yaml's parse(), loading the package on first use. */
export function parseYaml(text: string, options: { maxAliasCount: number }): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundler's require (see the header)
  loaded ??= (typeof require === 'function' ? require('yaml') : createRequire(import.meta.url)('yaml')) as Yaml;
  return loaded.parse(text, options);
}
