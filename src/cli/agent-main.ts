#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=1 --v8-pool-size=1 --max-opt=2
// `nodepulse-agent`: the package's bin for `nodepulse agent`, run with the agent's Node.js and V8
// settings and its C library's environment (agent-node-flags.ts) from its shebang, which a test
// holds to those lists. Everything
// else is the nodepulse command's: main.ts reads the arguments with `agent` put first.
//
// The shebang needs an `env` that splits its argument (-S): coreutils 8.30 and later, which every
// current Linux distribution ships. Without one, run `node <flags> …/main.js agent` as the image does.
process.argv.splice(2, 0, 'agent');
await import('./main.ts');
