// The chart's two hooks, rendered by the real `helm template`:
//
// | hook                     | objects                                      | held to                            |
// |--------------------------|----------------------------------------------|------------------------------------|
// | post-delete (uninstall)  | ServiceAccount, ClusterRole + binding, Role  | exactly its grants; deleted when   |
// |                          | + binding (pods list), Job `nodepulse        | it ends, succeeded or failed;      |
// |                          | cleanup`                                     | bounded; runs where the taint it   |
// |                          |                                              | removes would keep it off          |
// | test (`helm test`)       | ServiceAccount, Role + binding (pods list,   | exactly its grants; args that      |
// |                          | leases get), NetworkPolicy with the release's| `nodepulse verify` reads as meant; |
// |                          | own, Pod `nodepulse verify`                  | left for `kubectl logs` on failure |
//
// Both run the image under the restricted Pod Security level, on the image's architectures, and
// each can be turned off with a value. `nodepulse cleanup`'s flags are its interface as given
// (--agent-namespace, --agent-selector, --timeout).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { runCleanup } from '../../src/cli/cleanup-command.ts';
import { parseVerifyFlags } from '../../src/cli/verify-command.ts';
import { allowedArchitectures, grantsOf } from './agent-manifest-checks.ts';
import { restrictedViolations, type PodSpecShape } from './pod-security.ts';
import { helmRunner, hookObjects, isHook, only, withoutHooks, type K8sObject } from './render.ts';
import { schemaErrors } from './schema.ts';

const helm = helmRunner();
after(() => helm.close());

const AGENT_SELECTOR = 'app.kubernetes.io/component=agent,app.kubernetes.io/name=nodepulse';
/** What cleanup waits for: the agents and the controller, both of which write to the Nodes; never the chart's own hook and test pods. */
const WRITERS_SELECTOR = 'app.kubernetes.io/component in (agent,controller),app.kubernetes.io/name=nodepulse';

function annotations(o: K8sObject): Record<string, string> {
  return (o.metadata as { annotations?: Record<string, string> }).annotations ?? {};
}

function kindsOf(objects: readonly K8sObject[]): string[] {
  return objects.map((o) => o.kind).sort();
}

interface PodSpec extends PodSpecShape {
  serviceAccountName: string;
  restartPolicy?: string;
  tolerations?: Array<Record<string, string>>;
  affinity?: unknown;
  containers: Array<PodSpecShape['containers'][number] & { command?: string[]; args?: string[]; image?: string }>;
}

function podOf(o: K8sObject): PodSpec {
  const spec = o['spec'] as { template?: { spec: PodSpec } } & PodSpec;
  return spec.template?.spec ?? spec;
}

test('the uninstall hook: a post-delete Job runs `nodepulse cleanup` under an account of its own, created first, everything deleted when it ends', async () => {
  const objects = hookObjects(helm.template([]), 'post-delete');
  assert.deepEqual(kindsOf(objects), ['ClusterRole', 'ClusterRoleBinding', 'Job', 'Role', 'RoleBinding', 'ServiceAccount']);
  for (const o of objects) {
    const a = annotations(o);
    assert.equal(a['helm.sh/hook'], 'post-delete', `${o.kind}: a post-delete hook, so it runs after the release's objects are deleted`);
    assert.deepEqual(a['helm.sh/hook-delete-policy']?.split(',').sort(), ['before-hook-creation', 'hook-failed', 'hook-succeeded'], `${o.kind}: nothing of ours remains, whatever the outcome`);
    assert.equal(Number(a['helm.sh/hook-weight']), o.kind === 'Job' ? 0 : -10, `${o.kind}: the account and its grants exist before the Job`);
  }
  assert.deepEqual(objects.flatMap(schemaErrors), []);

  const job = only(objects, 'Job');
  const pod = podOf(job);
  const sa = { namespace: 'nodepulse', name: pod.serviceAccountName };
  assert.equal(sa.name, 'nodepulse-cleanup', 'not the agent\'s account: the admission policy confines that one to one node');
  assert.ok(objects.some((o) => o.kind === 'ServiceAccount' && o.metadata.name === sa.name), 'its account is a hook of the same event');
  assert.deepEqual(grantsOf(objects, sa), [
    'ClusterRole - core nodes get',
    'ClusterRole - core nodes list',
    'ClusterRole - core nodes patch',
    'ClusterRole - core nodes/status patch',
    'Role nodepulse coordination.k8s.io leases delete',
    'Role nodepulse coordination.k8s.io leases list',
    'Role nodepulse core pods list',
  ]);
  const spec = job['spec'] as { backoffLimit: number; activeDeadlineSeconds: number };
  assert.deepEqual([spec.backoffLimit, spec.activeDeadlineSeconds, pod.restartPolicy], [1, 240, 'Never'], 'bounded: retries and a deadline');
  const c = pod.containers[0];
  assert.deepEqual(c?.command, ['node', 'dist/src/cli/main.js', 'cleanup']);
  assert.deepEqual(c?.args, ['--agent-namespace=nodepulse', `--agent-selector=${WRITERS_SELECTOR}`, '--lease-namespace=nodepulse', '--timeout=2m']);
  const env = (c as { env?: Array<{ name: string; valueFrom?: unknown }> } | undefined)?.env ?? [];
  assert.deepEqual(env.map((e) => [e.name, e.valueFrom]), [
    ['POD_NAME', { fieldRef: { fieldPath: 'metadata.name' } }],
    ['POD_NAMESPACE', { fieldRef: { fieldPath: 'metadata.namespace' } }],
  ], 'cleanup knows its own pod, and does not wait for it');
  // The args are flags `nodepulse cleanup` takes: given a kubeconfig that does not exist, it stops
  // there (exit 2, one line about the kubeconfig), not at a flag.
  const err: string[] = [];
  const code = await runCleanup([...(c?.args ?? []), '--kubeconfig=/nonexistent/chart-kubeconfig'], { stdout: { write: () => true }, stderr: { write: (l: string) => err.push(l) }, env: {}, clock: new ManualClock() });
  assert.deepEqual([code, err.join('').trim().split('\n').length], [2, 1], err.join(''));
  assert.match(err.join(''), /^nodepulse cleanup: kubeconfig: \/nonexistent\/chart-kubeconfig must be a readable file/);
  assert.ok(pod.tolerations?.some((t) => t['key'] === 'nodepulse.io/agent-silent' && t['operator'] === 'Exists' && t['effect'] === 'NoSchedule'), 'it tolerates the taint it removes');
  assert.deepEqual(restrictedViolations(pod), [], 'restricted Pod Security level');
  const ds = only(helm.template([]), 'DaemonSet');
  assert.deepEqual(allowedArchitectures({ ...ds, spec: { template: { spec: pod } } } as K8sObject), allowedArchitectures(ds), 'on the image\'s architectures, as the agent');
});

test('the uninstall hook follows its values, and refuses a timeout the Job\'s deadline would cut', () => {
  const job = only(hookObjects(helm.template(['cleanup.timeout=5m', 'cleanup.activeDeadlineSeconds=600', 'cleanup.backoffLimit=0']), 'post-delete'), 'Job');
  assert.deepEqual([(job['spec'] as { activeDeadlineSeconds: number }).activeDeadlineSeconds, (job['spec'] as { backoffLimit: number }).backoffLimit], [600, 0]);
  assert.equal(podOf(job).containers[0]?.args?.[3], '--timeout=5m');
  assert.match(helm.templateError(['cleanup.timeout=4m']) ?? '', /^cleanup\.timeout: 4m must be shorter than cleanup\.activeDeadlineSeconds \(240s\), or the Job's deadline ends it before it can report$/m);
  assert.match(helm.templateError(['cleanup.backoffLimit=-1']) ?? '', /- cleanup\.backoffLimit: Must be greater than or equal to 0/);
  assert.deepEqual(hookObjects(helm.template(['cleanup.enabled=false']), 'post-delete'), [], 'cleanup.enabled=false renders no hook');
});

test('the uninstall hook deletes the agents\' Leases where leaseNamespace puts them, with grants there and in the release namespace', () => {
  const objects = hookObjects(helm.template(['leaseNamespace=node-leases'], { release: 'np', namespace: 'ops' }), 'post-delete');
  const pod = podOf(only(objects, 'Job'));
  assert.ok(pod.containers[0]?.args?.includes('--lease-namespace=node-leases'));
  const leaseGrants = grantsOf(objects, { namespace: 'ops', name: pod.serviceAccountName }).filter((g) => g.includes('leases'));
  assert.deepEqual(leaseGrants, [
    'Role node-leases coordination.k8s.io leases delete',
    'Role node-leases coordination.k8s.io leases list',
    'Role ops coordination.k8s.io leases delete',
    'Role ops coordination.k8s.io leases list',
  ]);
});

test('helm test: a Pod runs `nodepulse verify` with the release\'s names, under an account that may list pods and read leases only', () => {
  const objects = hookObjects(helm.template(['leaseNamespace=node-leases'], { release: 'np', namespace: 'ops' }), 'test');
  assert.deepEqual(kindsOf(objects), ['Pod', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'ServiceAccount']);
  for (const o of objects) {
    assert.equal(annotations(o)['helm.sh/hook'], 'test', o.kind);
    assert.deepEqual(annotations(o)['helm.sh/hook-delete-policy']?.split(',').sort(), ['before-hook-creation', 'hook-succeeded'], `${o.kind}: removed when the test passes, kept for kubectl logs when it fails`);
  }
  assert.deepEqual(objects.flatMap(schemaErrors), []);
  const pod = podOf(only(objects, 'Pod'));
  assert.deepEqual(grantsOf(objects, { namespace: 'ops', name: pod.serviceAccountName }), [
    'Role node-leases coordination.k8s.io leases get',
    'Role ops core pods list',
  ]);
  const c = pod.containers[0];
  assert.deepEqual(c?.command, ['node', 'dist/src/cli/main.js', 'verify']);
  assert.deepEqual(parseVerifyFlags(c?.args ?? []), {
    agentNamespace: 'ops',
    agentSelector: AGENT_SELECTOR,
    leaseNamespace: 'node-leases',
    timeoutMs: 60_000,
    kubeconfig: undefined,
    context: undefined,
  }, 'the args are flags `nodepulse verify` reads as meant');
  assert.deepEqual(restrictedViolations(pod), [], 'restricted Pod Security level');
  assert.equal(pod.restartPolicy, 'Never');
});

test('helm test with the NetworkPolicy on: a second policy of the test admits the test pod to the agents\' port, beside the release\'s own', () => {
  const all = helm.template(['networkPolicy.enabled=true']);
  const own = only(withoutHooks(all), 'NetworkPolicy');
  const forTest = only(hookObjects(all, 'test'), 'NetworkPolicy');
  assert.equal(own.metadata.name, 'nodepulse-metrics');
  const spec = forTest['spec'] as { podSelector: { matchLabels: Record<string, string> }; ingress: Array<{ ports: unknown; from: unknown }> };
  const agentLabels = (only(all, 'DaemonSet')['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
  assert.ok(Object.entries(spec.podSelector.matchLabels).every(([k, v]) => agentLabels[k] === v), 'it selects the agent pods');
  const testPodLabels = only(hookObjects(all, 'test'), 'Pod').metadata.labels ?? {};
  assert.deepEqual(spec.ingress, [{ ports: [{ port: 'metrics', protocol: 'TCP' }], from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'test' } } }] }]);
  assert.equal(testPodLabels['app.kubernetes.io/component'], 'test', 'and the test pod carries the labels it admits');
  assert.equal(hookObjects(helm.template([]), 'test').some((o) => o.kind === 'NetworkPolicy'), false, 'none without the release\'s policy');
});

test('tests.enabled=false renders no test, and `helm template` of the release alone holds no hook', () => {
  assert.deepEqual(hookObjects(helm.template(['tests.enabled=false']), 'test'), []);
  assert.equal(withoutHooks(helm.template([])).some(isHook), false);
});
