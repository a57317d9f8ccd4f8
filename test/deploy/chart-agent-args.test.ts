// What the chart renders is what the agent runs with: the rendered DaemonSet's args and env go
// to the built agent's --print-config, for the default values and for non-default ones, and the
// defaults the chart computes with (files/defaults.yaml: its checks and its alert thresholds)
// are the agent's and the controller's own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { parseDuration } from '../../src/clock/duration.ts';
import { parseControllerFlags } from '../../src/cli/controller-command.ts';
import { validateElectionTimings } from '../../src/election/leader-elector.ts';
import { agentInvocation, printConfig, runBuiltAgent } from './built-agent.ts';
import { CHART_DIR, helmRunner, only } from './render.ts';

interface ChartDefaults {
  agent: Record<string, string>;
  agentDerived: { renewIntervalFraction: number; stuckWindowSlack: string; renewJitterFraction: number; conditionMaxBackoff: string };
  controller: {
    grace: string;
    monitorPeriod: string;
    maxWritesPerSecond: number;
    leaderElection: { leaseDuration: string; renewDeadline: string; retryPeriod: string; retryJitterFraction: number };
  };
}

const DEFAULTS = parse(readFileSync(join(CHART_DIR, 'files', 'defaults.yaml'), 'utf8')) as ChartDefaults;
const NODE_ENV = { NODE_NAME: 'node-a', POD_NAMESPACE: 'nodepulse' };
const helm = helmRunner();
after(() => helm.close());

function ms(text: string | boolean | undefined): number | undefined {
  return typeof text === 'string' ? parseDuration(text) : undefined;
}

/** The agent's effective config for a chart render with these values. */
function renderedConfig(sets: readonly string[]): Record<string, string | boolean> {
  const { args, env } = agentInvocation(only(helm.template(sets), 'DaemonSet'), { node: 'node-a', namespace: 'nodepulse' });
  return printConfig(args, env);
}

test("the agent defaults the chart assumes are the built agent's own (--print-config)", () => {
  const printed = printConfig([], NODE_ENV);
  assert.ok(Object.keys(DEFAULTS.agent).length >= 12, 'precondition: files/defaults.yaml lists the agent defaults');
  for (const [key, value] of Object.entries(DEFAULTS.agent)) {
    if (key === 'maxMessageSize' || key === 'logLevel') assert.equal(printed[key], value, key);
    else assert.equal(ms(printed[key]), ms(value), `${key}: the chart assumes ${value}, the agent prints ${String(printed[key])}`);
  }
  const lease = ms(DEFAULTS.agent['leaseDuration']) ?? Number.NaN;
  assert.equal(ms(printed['renewInterval']), Math.round(lease * DEFAULTS.agentDerived.renewIntervalFraction), 'renewInterval = leaseDuration × the fraction');
  assert.equal(ms(printed['stuckWindow']), (ms(DEFAULTS.agent['relistDeadline']) ?? 0) + (ms(DEFAULTS.agentDerived.stuckWindowSlack) ?? 0), 'stuckWindow = relistDeadline + the slack');
});

test("the renew jitter the chart assumes is the agent's: both put the edge of renewInterval × (1 + jitter) < idleWindow at the same place", () => {
  const edge = 10_000 * (1 + DEFAULTS.agentDerived.renewJitterFraction);
  for (const [idle, accepted] of [[edge, false], [edge + 1, true]] as const) {
    const flags = ['--renew-interval=10s', `--idle-window=${idle}ms`];
    assert.equal(runBuiltAgent([...flags, '--print-config'], NODE_ENV).code, accepted ? 0 : 2, `agent ${flags.join(' ')}`);
    const failure = helm.templateError(['agent.renewInterval=10s', `agent.idleWindow=${idle}ms`]);
    assert.equal(failure === undefined, accepted, `chart with idleWindow ${idle}ms: ${failure ?? 'rendered'}`);
  }
});

test("the Node condition loop's backoff the chart assumes is the agent's: both put the edge of idleWindow > backoff at the same place", () => {
  const edge = ms(DEFAULTS.agentDerived.conditionMaxBackoff) ?? Number.NaN;
  assert.ok(edge > 0, 'precondition: files/defaults.yaml gives conditionMaxBackoff');
  // Short windows everywhere else, so that only this rule can refuse the idle window.
  const short = { relistPeriod: '100ms', leaseDuration: '4s', renewInterval: '1s', leaseRecheck: '100ms', statusPeriod: '1s', apiTimeout: '2s' };
  for (const [idle, accepted] of [[edge, false], [edge + 1, true]] as const) {
    const flags = [...Object.entries(short).map(([k, v]) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}=${v}`), `--idle-window=${idle}ms`];
    assert.equal(runBuiltAgent([...flags, '--print-config'], NODE_ENV).code, accepted ? 0 : 2, `agent ${flags.join(' ')}`);
    const failure = helm.templateError([...Object.entries(short).map(([k, v]) => `agent.${k}=${v}`), `agent.idleWindow=${idle}ms`]);
    assert.equal(failure === undefined, accepted, `chart with idleWindow ${idle}ms: ${failure ?? 'rendered'}`);
  }
});

test("the controller defaults the chart assumes are the controller's own", () => {
  const parsed = parseControllerFlags([], { POD_NAME: 'p', POD_NAMESPACE: 'nodepulse' });
  assert.ok('flags' in parsed, 'precondition: the controller accepts no flags at all');
  const { flags } = parsed;
  const le = DEFAULTS.controller.leaderElection;
  assert.deepEqual(
    [flags.graceMs, flags.monitorPeriodMs, flags.leaseDurationMs, flags.renewDeadlineMs, flags.retryPeriodMs, flags.maxWritesPerSecond],
    [ms(DEFAULTS.controller.grace), ms(DEFAULTS.controller.monitorPeriod), ms(le.leaseDuration), ms(le.renewDeadline), ms(le.retryPeriod), DEFAULTS.controller.maxWritesPerSecond],
  );
  // The retry jitter, by where the controller puts the edge of retryPeriod × (1 + jitter) < renewDeadline.
  const edge = Math.floor(10_000 / (1 + le.retryJitterFraction));
  assert.deepEqual(validateElectionTimings(15_000, 10_000, edge), []);
  assert.equal(validateElectionTimings(15_000, 10_000, edge + 1).length, 1);
});

test('the default render passes no flag, and the agent runs with its defaults', () => {
  const { args } = agentInvocation(only(helm.template([]), 'DaemonSet'), { node: 'node-a', namespace: 'nodepulse' });
  assert.deepEqual(args, []);
  // The runtime endpoint comes from the pod's env when the DaemonSet sets one; every other key
  // is the agent's default.
  const { criEndpoint: _endpoint, ...rendered } = renderedConfig([]);
  assert.deepEqual(rendered, printConfig([], NODE_ENV));
});

test('non-default values reach the agent as the values say, derived ones included', () => {
  const config = renderedConfig([
    'agent.relistDeadline=20s',
    'agent.relistThreshold=2m',
    'agent.leaseDuration=60s',
    'agent.idleWindow=45s',
    'agent.statusPeriod=10s',
    'agent.apiTimeout=15s',
    'agent.maxMessageSize=32Mi',
    'agent.startupGrace=0s',
    'agent.logLevel=debug',
    'nodeCondition=false',
  ]);
  assert.deepEqual(
    { relistDeadline: ms(config['relistDeadline']), relistThreshold: ms(config['relistThreshold']), leaseDuration: ms(config['leaseDuration']), idleWindow: ms(config['idleWindow']), statusPeriod: ms(config['statusPeriod']), apiTimeout: ms(config['apiTimeout']), startupGrace: ms(config['startupGrace']) },
    { relistDeadline: 20_000, relistThreshold: 120_000, leaseDuration: 60_000, idleWindow: 45_000, statusPeriod: 10_000, apiTimeout: 15_000, startupGrace: 0 },
  );
  assert.equal(ms(config['stuckWindow']), 50_000, 'stuckWindow derived from the new deadline: 20s + 30s');
  assert.equal(ms(config['renewInterval']), 15_000, 'renewInterval derived from the new lease: 60s × 0.25');
  assert.deepEqual([config['maxMessageSize'], config['logLevel'], config['nodeCondition']], ['32Mi', 'debug', false]);
});

test('a separate lease namespace and explicit derived values reach the agent', () => {
  const sets = ['leaseNamespace=node-leases', 'agent.stuckWindow=2m', 'agent.renewInterval=5s', 'agent.conditionRefresh=10m', 'agent.leaseRecheck=2s', 'agent.statusDeadline=20s'];
  const config = renderedConfig(sets);
  assert.deepEqual(
    [config['leaseNamespace'], ms(config['stuckWindow']), ms(config['renewInterval']), ms(config['conditionRefresh']), ms(config['leaseRecheck']), ms(config['statusDeadline'])],
    ['node-leases', 120_000, 5_000, 600_000, 2_000, 20_000],
  );
});
