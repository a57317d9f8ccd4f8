// NOTES.txt, which `helm install` prints after it created every object (a template error there
// fails the install late), says what to check, with this release's own names, and only the
// checks of what the values turned on.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { helmRunner } from './render.ts';

const helm = helmRunner();
after(() => helm.close());

test('NOTES.txt names the rollout, the leases and the condition to check, with the release\'s names', () => {
  const notes = helm.notes(['leaseNamespace=node-leases', 'controller.grace=1m'], { release: 'np', namespace: 'ops' });
  assert.match(notes, /release np, namespace ops/);
  assert.match(notes, /kubectl -n ops rollout status daemonset\/np-nodepulse/);
  assert.match(notes, /kubectl nodepulse fleet --lease-namespace node-leases --grace 1m --observe 1m/, 'judged over the readers\' grace');
  assert.match(notes, /RuntimeRelistUnhealthy/);
  assert.match(notes, /pod-security\.kubernetes\.io\/enforce=privileged/);
  assert.match(notes, /Monitoring is off/);
  assert.doesNotMatch(notes, /controller has a leader/, 'no controller check without the controller');
});

test('NOTES.txt adds the controller\'s and the monitoring checks when they are on, and drops the condition check when it is off', () => {
  const notes = helm.notes(['controller.enabled=true', 'monitoring.enabled=true', 'grafanaDashboard.enabled=true', 'nodeCondition=false']);
  assert.match(notes, /kubectl -n nodepulse get lease nodepulse-controller/);
  assert.match(notes, /logs -l app\.kubernetes\.io\/component=controller --tail=-1 \| grep -E 'Marking \(paused\|resumed\)'/);
  assert.match(notes, /--grace 50s --observe 50s/);
  assert.match(notes, /count\(up\{job="nodepulse"\} == 1\)/);
  assert.match(notes, /up\{job="nodepulse-controller"\}/);
  assert.match(notes, /kube_node_info/);
  assert.match(notes, /ConfigMap nodepulse-dashboard/);
  assert.doesNotMatch(notes, /Monitoring is off/);
  assert.doesNotMatch(notes, /RuntimeRelistUnhealthy=False/);
  assert.doesNotMatch(notes, /NetworkPolicy/, 'no NetworkPolicy line while it is off');
});

test('NOTES.txt names the sources the NetworkPolicy admits, when it is on', () => {
  assert.match(helm.notes(['networkPolicy.enabled=true']), /The NetworkPolicy nodepulse-metrics admits the agents' port only from namespace monitoring:\n.*cannot scrape/);
  const peers = helm.notes(['networkPolicy.enabled=true', 'networkPolicy.monitoringNamespace=', { json: 'networkPolicy.extraFrom=[{"ipBlock":{"cidr":"10.0.0.0/16"}}]' }]);
  assert.match(peers, /admits the agents' port only from 1 peer\(s\) of networkPolicy\.extraFrom:/);
});
