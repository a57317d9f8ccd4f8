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
  assert.match(notes, /`count\(up\{job="nodepulse"\} == 1\)` is the\n\s+number of nodes an agent runs on: Linux nodes of the image's architectures\n\s+\(amd64, arm64; other nodes have no agent/, 'not "the number of Linux nodes": only those the image can run on');
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

test('NOTES.txt says which safe defaults are installed: the admission policy where the server serves it, else why not; the priority level; the test and the uninstall hook', () => {
  const served = helm.notes([]);
  assert.match(served, /The ValidatingAdmissionPolicy nodepulse-own-node-only lets each agent write only its own\n\s+node's Lease and status\./);
  assert.match(served, /requests are in priority level\n\s+nodepulse \(FlowSchema nodepulse\)/);
  assert.match(served, /Test it: helm test nodepulse -n nodepulse\n/);
  assert.match(served, /runs a Job that removes the\nRuntimeRelistUnhealthy condition and the nodepulse\.io\/agent-silent taint from every Node/);
  const older = helm.notes([], { apiVersions: [] });
  assert.match(older, /No admission policy: this API server does not serve admissionregistration\.k8s\.io\/v1\n\s+ValidatingAdmissionPolicy \(Kubernetes < 1\.30\)/);
  const off = helm.notes(['admissionPolicy.enabled=false', 'cleanup.enabled=false', 'image.architectures=null']);
  assert.match(off, /The admission policy is off \(admissionPolicy\.enabled=false\)/);
  assert.match(off, /cleanup\.enabled is false, so `helm uninstall` leaves the RuntimeRelistUnhealthy/);
  assert.match(off, /1\. One agent per Linux node, rolled out:/, 'no architecture list, no architecture in the count');
});
