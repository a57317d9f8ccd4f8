// What the manifests pass on the command line is what the commands read: every arg the DaemonSet
// and the controller Deployment are rendered with (kustomize, and Helm with every value that
// becomes a flag set) goes through the agent's and the controller's own flag grammar and zod
// schema, and must be accepted. A flag renamed, or a form the grammar stops reading, fails here
// before it fails on a node.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { loadAgentConfig } from '../../src/config/load-agent-config.ts';
import { parseControllerFlags } from '../../src/cli/controller-command.ts';
import { helmRunner, only, renderKustomizeOverlay, type K8sObject } from './render.ts';

const helm = helmRunner();
after(() => helm.close());

/** The downward-API variables both pods get. */
const POD_ENV = { NODE_NAME: 'node-a', POD_NAMESPACE: 'nodepulse', POD_NAME: 'nodepulse-controller-0' };

function argsOf(objects: readonly K8sObject[], kind: 'DaemonSet' | 'Deployment'): string[] {
  const spec = only(objects, kind)['spec'] as { template: { spec: { containers: Array<{ args?: string[] }> } } };
  return spec.template.spec.containers[0]?.args ?? [];
}

test("the agent reads every arg the DaemonSet is rendered with (kustomize, and Helm with every agent value)", () => {
  const renders: Array<[string, readonly K8sObject[]]> = [
    ['kustomize deploy/base', renderKustomizeOverlay(['deploy/base'], [])],
    [
      'helm, every agent value',
      helm.template([
        'agent.relistPeriod=2s',
        'agent.relistThreshold=5m',
        'agent.relistDeadline=2m',
        'agent.idleWindow=40s',
        'agent.stuckWindow=3m',
        'agent.leaseDuration=60s',
        'agent.renewInterval=15s',
        'agent.maxMessageSize=33554432',
        'agent.startupGrace=1m',
        'agent.logLevel=debug',
        'leaseNamespace=node-leases',
        'nodeCondition=false',
      ]),
    ],
  ];
  for (const [what, objects] of renders) {
    const args = argsOf(objects, 'DaemonSet');
    const loaded = loadAgentConfig({ argv: args, env: POD_ENV, readFile: () => '' });
    assert.ok(loaded.ok, `${what}: ${args.join(' ')}: ${loaded.ok ? '' : loaded.error.lines.join('; ')}`);
    if (what.startsWith('helm')) {
      assert.equal(args.length, 12, `precondition: every value became a flag (${args.join(' ')})`);
      assert.deepEqual(
        [loaded.config.relistThresholdMs, loaded.config.maxMessageSizeBytes, loaded.config.leaseNamespace, loaded.config.nodeCondition],
        [300_000, 33_554_432, 'node-leases', false],
      );
    }
  }
});

test('the controller reads every arg its Deployment is rendered with (kustomize with the taint, and Helm with every controller value)', () => {
  const renders: Array<[string, readonly K8sObject[]]> = [
    ['kustomize controller + controller-taint', renderKustomizeOverlay(['deploy/base'], ['deploy/components/controller', 'deploy/components/controller-taint'])],
    [
      'helm, every controller value',
      helm.template([
        'controller.enabled=true',
        'controller.taint=true',
        'controller.grace=1m30s',
        'controller.nodeLabelSelector=node-role.kubernetes.io/worker',
        'controller.monitorPeriod=10s',
        'controller.maxWritesPerSecond=5',
        'controller.leaderElection.leaseDuration=30s',
        'controller.leaderElection.renewDeadline=20s',
        'controller.leaderElection.retryPeriod=4s',
        'controller.logLevel=debug',
      ]),
    ],
  ];
  for (const [what, objects] of renders) {
    const args = argsOf(objects, 'Deployment');
    assert.ok(args.includes('--taint'), `precondition: ${what} renders --taint (${args.join(' ')})`);
    const parsed = parseControllerFlags(args, POD_ENV);
    assert.ok('flags' in parsed, `${what}: ${args.join(' ')}: ${'error' in parsed ? parsed.error.lines.join('; ') : 'help'}`);
    assert.equal(parsed.flags.taint, true, what);
  }
});
