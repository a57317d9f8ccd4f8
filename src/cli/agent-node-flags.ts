// The Node.js and V8 settings the agent runs with, wherever it runs: the image's entrypoint
// (Dockerfile, and through it the DaemonSet and the chart) and the package's `nodepulse-agent`
// bin (agent-main.ts, in its shebang). Tests hold both to this list, and the benchmark runs the
// agent, and the relist it measures for nodepulse, with it (docs/bench.md).
//
// | setting                   | why (measured on the running agent at 330 containers, docs/bench.md)                 |
// |---------------------------|---------------------------------------------------------------------------------------|
// | --max-semi-space-size=1   | V8's young generation grows to 16 MiB semi-spaces by default, and the relist's answer |
// |                           | buffers wait for a full collection to be freed: RSS ranged 90–106 MiB from one run to |
// |                           | the next; with 1 MiB semi-spaces they die in the frequent, cheap young collections and|
// |                           | RSS holds at 87–89 MiB, with no CPU cost the measurement could tell from noise        |
// | --v8-pool-size=1          | one V8 worker thread instead of four for concurrent marking, sweeping and compiling:  |
// |                           | about 2 MiB less RSS (fewer threads, fewer malloc arenas), CPU the same within noise   |
//
// Only for the agent: `nodepulse fleet` and `controller` parse whole node lists and keep Node's
// defaults. Each setting is accepted in NODE_OPTIONS too, where an operator may override it.
export const AGENT_NODE_FLAGS = ['--max-semi-space-size=1', '--v8-pool-size=1'] as const;
