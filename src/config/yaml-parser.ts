// The YAML parser the agent's config file is read with, in a module of its own so that
// load-agent-config.ts can import it only when a file is given (most agents are given none, and a
// module once loaded stays resident for the agent's life: docs/bench.md measures yaml's cost).
//
// Why a module and not `import('yaml')` there: yaml is CommonJS, and a bundler's dynamic import
// of a CommonJS package yields only its default export (the image runs the agent bundled:
// scripts/bundle.ts), where Node yields its named exports too; a static named import reads the
// same under both. test/package/bundle.test.ts reads a config file with the bundle.
export { parse as parseYaml } from 'yaml';
