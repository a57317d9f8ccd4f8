// The agent fleet (agent-fleet.ts) as a process of its own, so its CPU is never the measured
// process's, and a measurement can start and stop it:
//
//   node test/scale/agent-fleet-main.ts --server URL --ca FILE --tokens FILE --agents N
//        [--starts-per-second R] [--status-nodes N --admin-cert FILE --admin-key FILE]
//
// --tokens is agentTokens()'s file (fleet-load.ts); the first N agents renew, started R a second
// (default 100). With --status-nodes,
// nodes 0..N-1 also get the kubelet's 5-minute status report, written with the admin's
// certificate. It prints its counts as one JSON line a second (FleetCounts), and stops on SIGTERM
// or SIGINT after a last line.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SystemClock } from '../../src/clock/clock.ts';
import { adminApi } from './admin-api.ts';
import { AgentFleet } from './agent-fleet.ts';
import { AGENT_NAMESPACE, type AgentToken } from './fleet-load.ts';
import { nodeName } from './kubelet-node.ts';

const { values } = parseArgs({
  options: {
    server: { type: 'string' },
    ca: { type: 'string' },
    tokens: { type: 'string' },
    agents: { type: 'string', default: '0' },
    'starts-per-second': { type: 'string', default: '100' },
    'status-nodes': { type: 'string', default: '0' },
    'admin-cert': { type: 'string' },
    'admin-key': { type: 'string' },
  },
});
const server = values.server ?? '';
const caPem = readFileSync(values.ca ?? '', 'utf8');
const agents = Number(values.agents);
const statusNodes = Number(values['status-nodes']);
const clock = new SystemClock();
const fleet = new AgentFleet(clock);
const tokens = agents > 0 ? (JSON.parse(readFileSync(values.tokens ?? '', 'utf8')) as AgentToken[]).slice(0, agents) : [];
if (tokens.length < agents) throw new Error(`tokens: ${values.tokens} holds ${tokens.length} tokens, fewer than --agents ${agents}`);
fleet.startAgents(server, caPem, tokens, AGENT_NAMESPACE, Number(values['starts-per-second']));
const api = statusNodes > 0 ? adminApi({ server, caPem, cert: values['admin-cert'] ?? '', key: values['admin-key'] ?? '', maxSockets: 4 }) : undefined;
if (api !== undefined) fleet.startStatusReports(api, Array.from({ length: statusNodes }, (_, i) => nodeName(i)));

const print = (): void => {
  process.stdout.write(`${JSON.stringify(fleet.counts())}\n`);
};
const stopped = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    stopped.abort();
    fleet.stop();
    api?.close();
    print();
  });
}
while (!stopped.signal.aborted) {
  print();
  await clock.sleep(1_000, stopped.signal).catch(() => undefined);
}
