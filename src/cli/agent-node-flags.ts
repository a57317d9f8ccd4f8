// The Node.js and V8 settings the agent runs with, and the one environment variable of its C
// library, wherever it runs: the image's entrypoint and ENV (Dockerfile, and through it the
// DaemonSet and the chart) and the package's `nodepulse-agent` bin (agent-main.ts, in its
// shebang). Tests hold both to these lists, and the benchmark runs the agent with them
// (docs/bench.md).
//
// | setting                   | why (measured on the running agent at 330 containers, docs/bench.md)                 |
// |---------------------------|---------------------------------------------------------------------------------------|
// | --max-semi-space-size=1   | V8's young generation grows to 16 MiB semi-spaces by default, and the relist's answer |
// |                           | buffers wait for a full collection to be freed: RSS ranged 90–106 MiB from one run to |
// |                           | the next; with 1 MiB semi-spaces they die in the frequent, cheap young collections and|
// |                           | RSS holds at 87–89 MiB, with no CPU cost the measurement could tell from noise        |
// | --v8-pool-size=1          | one V8 worker thread instead of four for concurrent marking, sweeping and compiling:  |
// |                           | about 2 MiB less RSS (fewer threads, fewer malloc arenas), CPU the same within noise   |
// | --max-opt=2               | V8's optimising tiers stop at Maglev: TurboFan is never run, so the pages of the node |
// |                           | binary that hold it are never touched. The agent's hot code is one relist a second,  |
// |                           | which Maglev compiles well: the bundled agent's RSS 78.9–79.8 MiB against 83.6–84.3   |
// |                           | (file-backed pages 46.9 against 52.2 MiB), CPU 0.66–0.82 % of one core against        |
// |                           | 0.68–0.78 %, the same within noise (four 30 s windows each, interleaved). Stopping at |
// |                           | Sparkplug (--max-opt=1) saved 4.5 MiB more but cost a fifth more CPU. Back to back,   |
// |                           | where the steady state cannot tell, a relist costs more on Maglev's code: 2.0–2.6 ms  |
// |                           | against 1.45–1.75 at 330 containers; the empty node's ratio to the floor pays for it  |
//
// Only for the agent: `nodepulse fleet` and `controller` parse whole node lists and keep Node's
// defaults. The first two are accepted in NODE_OPTIONS too, where an operator may override them;
// --max-opt is a V8 flag Node does not take from NODE_OPTIONS, so it is given on the command line
// (the image's entrypoint, the bin's shebang), where a later --max-opt overrides it.
export const AGENT_NODE_FLAGS = ['--max-semi-space-size=1', '--v8-pool-size=1', '--max-opt=2'] as const;

// | variable           | why (the same measurement)                                                        |
// |--------------------|-----------------------------------------------------------------------------------|
// | MALLOC_ARENA_MAX=1 | glibc gives each thread that allocates (libuv's pool, V8's worker, the main one) |
// |                    | an arena of its own, each with its own free pages: one arena for all held RSS at  |
// |                    | 77.1–77.9 MiB against 79.3–79.8, CPU the same within noise (two 30 s windows each,|
// |                    | interleaved). The agent's threads seldom allocate at once, so they rarely wait   |
// |                    | on the one arena's lock. A C library other than glibc ignores it                 |
//
// In the image it is an ENV of the image, so every command the image runs has it; an operator's
// env in the pod spec overrides it.
export const AGENT_ENV = { MALLOC_ARENA_MAX: '1' } as const;
