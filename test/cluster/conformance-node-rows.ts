// The conformance table's rows on Nodes: the condition writer (condition/node-condition.ts), the
// controller's marks (controller/node-marker.ts), cleanup (cli/cleanup-command.ts) and the
// readers; and the rest: an Event's bounds, the controller's DaemonSet view, cleanup's Pods.
// conformance-table.ts says what a row is.
import assert from 'node:assert/strict';
import { CONDITION_DELETE_PATCH, nodeLeftovers, taintRemovalPatch } from '../../src/cleanup/node-leftovers.ts';
import { NodeCondition } from '../../src/condition/node-condition.ts';
import { agentDaemonSet, type DaemonSetObject } from '../../src/controller/agent-rollout.ts';
import { markerApi } from '../../src/controller/node-marker.ts';
import { nodeRecord } from '../../src/fleet/fleet-view.ts';
import type { NodeReadiness } from '../../src/fleet/readiness.ts';
import { NODE_PROTOBUF } from '../../src/kube/kube-protobuf.ts';
import type { Node } from '../../src/kube/kube-types.ts';
import { kubeListWatch, type ListPage, type WatchEvent } from '../../src/kube/list-watch.ts';
import { formatMicroTime } from '../../src/kube/meta-time.ts';
import { listAsRead, nodeAsRead, observe, watchAsRead, type Outcome } from './conformance-read.ts';
import type { ApiAnswer } from './api-request.ts';
import {
  believed, DAEMONSETS, EVENTS, getNode, HEALTHY, JSON_PATCH, kubeletNode, LIST_QUERY, markerFor, MERGE, NODE, NODES, OTHER_TAINT, OUR_STALE_CONDITION, PODS,
  recording, type Row, SILENT_TAINT, silentLogger, staleReading, STRATEGIC, streamingListUntil, UNREACHABLE_TAINT, watchToEnd,
} from './conformance-row.ts';

export const NODE_ROWS: readonly Row[] = [
  {
    name: 'node GET, as the lease writer, the condition writer and the runtime probe read it',
    sends: [`GET ${NODE}`],
    product: 'lease/lease-writer.ts (uid), condition/node-condition.ts (conditions), cli/agent-command.ts (containerRuntimeVersion)',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'get', { conditions: [OUR_STALE_CONDITION], taints: [OTHER_TAINT, SILENT_TAINT] });
      return observe(() => getNode(ctx, node.name), (n) => nodeAsRead(n, ctx.rv));
    },
  },
  {
    name: 'node GET of a Node that does not exist: 404 NotFound',
    sends: [`GET ${NODE}`],
    product: 'lease/lease-writer.ts (creates the lease without an owner), condition/node-condition.ts (retries)',
    expect: { code: 'not_found', status: 404, reason: 'NotFound' },
    run: (ctx) => observe(() => ctx.client().getNode(ctx.name('none'))),
  },
  {
    name: 'the agent\'s condition: GET, strategic PATCH of status beside the kubelet\'s conditions, Event',
    sends: [`GET ${NODE}`, `PATCH ${NODE}/status ${STRATEGIC}`, `POST ${EVENTS} application/json`],
    product: 'condition/node-condition.ts tick (first verdict since start)',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'condition');
      const calls: Array<{ call: string; outcome: Outcome | string }> = [];
      const condition = new NodeCondition({
        client: recording(ctx.client(), calls), clock: ctx.clock, nodeName: node.name, runtimeHealth: () => HEALTHY, thresholdMs: 180_000, periodMs: 1_000, logger: silentLogger(),
      });
      await condition.tick(new AbortController().signal);
      return { outcome: 'ok', read: { calls, node: nodeAsRead(await getNode(ctx, node.name), ctx.rv) } };
    },
  },
  {
    name: 'the agent\'s condition refresh: strategic PATCH of lastHeartbeatTime alone',
    sends: [`GET ${NODE}`, `PATCH ${NODE}/status ${STRATEGIC}`],
    product: 'condition/node-condition.ts tick (refresh due, state unchanged)',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'refresh');
      const calls: Array<{ call: string; outcome: Outcome | string }> = [];
      const condition = new NodeCondition({
        client: recording(ctx.client(), calls), clock: ctx.clock, nodeName: node.name, runtimeHealth: () => HEALTHY, thresholdMs: 180_000, periodMs: 1_000, refreshMs: 60_000, logger: silentLogger(),
      });
      const signal = new AbortController().signal;
      await condition.tick(signal);
      await ctx.clock.advance(60_000);
      calls.length = 0;
      await condition.tick(signal);
      return { outcome: 'ok', read: { calls, node: nodeAsRead(await getNode(ctx, node.name), ctx.rv) } };
    },
  },
  {
    name: 'the controller\'s mark: strategic PATCH of status and merge PATCH of taints, each with the resourceVersion judged on, and an Event',
    sends: [`PATCH ${NODE}/status ${STRATEGIC}`, `PATCH ${NODE} ${MERGE}`, `POST ${EVENTS} application/json`],
    product: 'controller/node-marker.ts markStale (taint on)',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'mark', { taints: [OTHER_TAINT] });
      const record = nodeRecord(await getNode(ctx, node.name));
      const marked = await observe(() => markerFor(ctx, true).markStale(believed(), record, staleReading(node.name)));
      return marked.outcome === 'ok' ? { outcome: 'ok', read: nodeAsRead(await getNode(ctx, node.name), ctx.rv) } : marked;
    },
  },
  {
    name: 'the controller\'s clear: strategic PATCH of status and merge PATCH removing its taint',
    sends: [`PATCH ${NODE}/status ${STRATEGIC}`, `PATCH ${NODE} ${MERGE}`, `POST ${EVENTS} application/json`],
    product: 'controller/node-marker.ts markHealthy',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'clear', { conditions: [{ ...OUR_STALE_CONDITION, status: 'Unknown', reason: 'AgentLeaseStale' }], taints: [OTHER_TAINT, SILENT_TAINT] });
      const record = nodeRecord(await getNode(ctx, node.name));
      const reading: NodeReadiness = { ...staleReading(node.name), verdict: 'Fresh', sinceMovedMs: 1_000 };
      const cleared = await observe(() => markerFor(ctx, true).markHealthy(believed(), record, reading));
      return cleared.outcome === 'ok' ? { outcome: 'ok', read: nodeAsRead(await getNode(ctx, node.name), ctx.rv) } : cleared;
    },
  },
  {
    name: 'node status strategic PATCH with a stale resourceVersion: 409 Conflict',
    sends: [`PATCH ${NODE}/status ${STRATEGIC}`],
    product: 'controller/node-marker.ts (the agent wrote in between: judge again)',
    expect: { code: 'conflict', status: 409, reason: 'Conflict' },
    async run(ctx) {
      const node = await kubeletNode(ctx, 'stale-status');
      const record = nodeRecord(await getNode(ctx, node.name));
      await ctx.client().patchNodeStatus(node.name, { status: { conditions: [OUR_STALE_CONDITION] } });
      return observe(() => markerFor(ctx, false).markStale(believed(), record, staleReading(node.name)));
    },
  },
  {
    name: 'node merge PATCH of taints with a stale resourceVersion: 409 Conflict',
    sends: [`PATCH ${NODE} ${MERGE}`],
    product: 'controller/node-marker.ts (someone changed the Node in between)',
    expect: { code: 'conflict', status: 409, reason: 'Conflict' },
    async run(ctx) {
      const node = await kubeletNode(ctx, 'stale-taints');
      const record = nodeRecord(await getNode(ctx, node.name));
      await ctx.client().patchNodeStatus(node.name, { status: { conditions: [OUR_STALE_CONDITION] } });
      return observe(() => markerApi(ctx.client()).patchNode(node.name, { metadata: { resourceVersion: record.resourceVersion }, spec: { taints: [SILENT_TAINT] } }, {}));
    },
  },
  {
    name: 'cleanup: strategic PATCH deleting our condition by type ($patch: delete), the kubelet\'s kept',
    sends: [`PATCH ${NODE}/status ${STRATEGIC}`],
    product: 'cli/cleanup-command.ts with cleanup/node-leftovers.ts CONDITION_DELETE_PATCH',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'delete-condition', { conditions: [OUR_STALE_CONDITION] });
      return observe(() => ctx.client().patchNodeStatus(node.name, CONDITION_DELETE_PATCH), (n) => nodeAsRead(n, ctx.rv));
    },
  },
  {
    name: 'cleanup: $patch: delete of a condition the Node does not carry changes nothing',
    sends: [`PATCH ${NODE}/status ${STRATEGIC}`],
    product: 'cli/cleanup-command.ts (a second pass)',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'delete-absent');
      const before = nodeAsRead(await getNode(ctx, node.name), ctx.rv);
      return observe(() => ctx.client().patchNodeStatus(node.name, CONDITION_DELETE_PATCH), (n) => ({ before, after: nodeAsRead(n, ctx.rv) }));
    },
  },
  {
    name: 'cleanup: JSON PATCH removing our taint, guarded by a test of what was read',
    sends: [`PATCH ${NODE} ${JSON_PATCH}`],
    product: 'cli/cleanup-command.ts with cleanup/node-leftovers.ts taintRemovalPatch',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'taint-removal', { taints: [OTHER_TAINT, SILENT_TAINT, UNREACHABLE_TAINT] });
      const patch = taintRemovalPatch(nodeLeftovers(await getNode(ctx, node.name)));
      return observe(() => ctx.client().request<Node>({ method: 'PATCH', path: `/api/v1/nodes/${node.name}`, body: patch, contentType: JSON_PATCH, what: `PATCH nodes ${node.name}` }), (n) => nodeAsRead(n, ctx.rv));
    },
  },
  {
    name: 'cleanup: JSON PATCH whose test no longer holds (another writer moved the taints): 422 Invalid',
    sends: [`PATCH ${NODE} ${JSON_PATCH}`],
    product: 'cli/cleanup-command.ts (reads the Node again and retries)',
    expect: { code: 'invalid', status: 422, reason: 'Invalid' },
    async run(ctx) {
      const node = await kubeletNode(ctx, 'taint-moved', { taints: [OTHER_TAINT, SILENT_TAINT] });
      const patch = taintRemovalPatch(nodeLeftovers(await getNode(ctx, node.name)));
      const moved = await ctx.target.send({ method: 'PATCH', path: `/api/v1/nodes/${node.name}`, contentType: MERGE, body: { spec: { taints: [UNREACHABLE_TAINT, OTHER_TAINT, SILENT_TAINT] } } });
      assert.equal(moved.status, 200, `precondition: another writer's taint must be added: ${moved.body}`);
      return observe(() => ctx.client().request<Node>({ method: 'PATCH', path: `/api/v1/nodes/${node.name}`, body: patch, contentType: JSON_PATCH, what: `PATCH nodes ${node.name}` }));
    },
  },
  {
    name: 'node status strategic PATCH by a user RBAC does not allow: 403 Forbidden',
    sends: [`PATCH ${NODE}/status ${STRATEGIC}`],
    product: 'condition/node-condition.ts, as an agent whose ClusterRole is missing',
    expect: { code: 'forbidden', status: 403, reason: 'Forbidden' },
    async run(ctx) {
      const node = await kubeletNode(ctx, 'refused');
      return observe(() => ctx.client('nobody').patchNodeStatus(node.name, { status: { conditions: [OUR_STALE_CONDITION] } }));
    },
  },
  {
    name: 'node LIST (fleet and the controller asking for protobuf, cleanup for JSON): one reading either way',
    sends: [`GET ${NODES}?limit`],
    product: 'kube/list-watch.ts kubeListWatch list of /api/v1/nodes, with kube/kube-protobuf.ts NODE_PROTOBUF (fleet, the controller) and without (cleanup)',
    expect: 'ok',
    async run(ctx) {
      await kubeletNode(ctx, 'list-a', { conditions: [OUR_STALE_CONDITION] });
      await kubeletNode(ctx, 'list-b', { taints: [SILENT_TAINT] });
      const readers = kubeListWatch<Node>({ client: ctx.client(), path: '/api/v1/nodes', protobuf: NODE_PROTOBUF });
      const cleanup = kubeListWatch<Node>({ client: ctx.client(), path: '/api/v1/nodes' });
      const ours = (n: Node): boolean => n.metadata.name?.startsWith(ctx.name('list-')) === true;
      const judged = (page: ListPage<Node>): unknown => page.items.filter(ours).map((n) => ({ record: nodeRecord(n), leftovers: nodeLeftovers(n), conditions: n.status?.conditions }));
      const asJson = judged(await cleanup.list({ signal: new AbortController().signal, limit: 500 }));
      return observe(() => readers.list({ signal: new AbortController().signal, limit: 500 }), (page) => {
        assert.deepEqual(judged(page), asJson, 'the Nodes read from protobuf (or the JSON a server without it answers) must read as the JSON list\'s do');
        return listAsRead(page, (n) => nodeAsRead(n, ctx.rv), ours);
      });
    },
  },
  {
    name: 'node WATCH from the list\'s resourceVersion: a status write, then the Node deleted',
    sends: [`GET ${NODES}?allowWatchBookmarks&resourceVersion&timeoutSeconds&watch`],
    product: 'kube/list-watch.ts kubeListWatch watch of /api/v1/nodes',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'watch');
      const other = await kubeletNode(ctx, 'watch-other');
      const source = kubeListWatch<Node>({ client: ctx.client(), path: '/api/v1/nodes', protobuf: NODE_PROTOBUF });
      const listed = await source.list({ signal: new AbortController().signal, limit: 500 });
      await ctx.client().patchNodeStatus(node.name, { status: { conditions: [OUR_STALE_CONDITION] } });
      const gone = await ctx.target.send({ method: 'DELETE', path: `/api/v1/nodes/${node.name}` });
      assert.equal(gone.status, 200, `precondition: Node ${node.name} must be deleted: ${gone.body}`);
      const events = await watchToEnd(ctx.client(), '/api/v1/nodes', { resourceVersion: listed.metadata.resourceVersion ?? '' }, {
        live: () => ctx.client().patchNodeStatus(other.name, { status: { conditions: [OUR_STALE_CONDITION] } }),
        protobuf: NODE_PROTOBUF.event,
      });
      return { outcome: 'ok', read: watchAsRead(events as WatchEvent<Node>[], (n) => nodeAsRead(n, ctx.rv), (n) => n.metadata.name === node.name) };
    },
  },

  {
    name: 'node streaming list (WATCH with sendInitialEvents): each Node ADDED, the BOOKMARK that ends the initial events, then a status write',
    sends: [`GET ${NODES}?allowWatchBookmarks&resourceVersionMatch&sendInitialEvents&timeoutSeconds&watch`],
    product: 'kube/list-watch.ts kubeListWatch watchList of /api/v1/nodes: the informer\'s first read and fleet\'s one listing (readAll)',
    expect: 'ok',
    async run(ctx) {
      const a = await kubeletNode(ctx, 'stream-a', { conditions: [OUR_STALE_CONDITION] });
      await kubeletNode(ctx, 'stream-b', { taints: [SILENT_TAINT] });
      const source = kubeListWatch<Node>({ client: ctx.client(), path: '/api/v1/nodes', random: () => 0, protobuf: NODE_PROTOBUF });
      const ours = (n: Node): boolean => n.metadata.name?.startsWith(ctx.name('stream-')) === true;
      const events = await streamingListUntil(source, {
        live: () => ctx.client().patchNodeStatus(a.name, { status: { conditions: [{ ...OUR_STALE_CONDITION, status: 'False', reason: 'RelistHealthy', message: 'relist was last seen active 1s ago' }] } }),
        done: (seen) => seen.some((e) => e.type === 'MODIFIED' && e.object.metadata.name === a.name),
      });
      return { outcome: 'ok', read: watchAsRead(events, (n) => nodeAsRead(n, ctx.rv), ours) };
    },
  },
  // Events (events.k8s.io/v1 in `default`), beyond those the rows above send.
  {
    name: 'Event POST with a note over 1 KiB: 422 Invalid (the bound the writers truncate to)',
    sends: [`POST ${EVENTS} application/json`],
    product: 'condition/node-condition.ts and controller/node-marker.ts truncate the note to 1 KiB',
    expect: { code: 'invalid', status: 422, reason: 'Invalid' },
    async run(ctx) {
      const name = ctx.name('event');
      return observe(() => ctx.client().createEvent('default', {
        apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: `${name}.1`, namespace: 'default' },
        eventTime: formatMicroTime(ctx.clock.wallMicros()), reportingController: 'nodepulse.io/agent', reportingInstance: `nodepulse-agent-${name}`,
        action: 'SetCondition', reason: 'RelistHealthy', type: 'Normal', note: 'x'.repeat(1025), regarding: { apiVersion: 'v1', kind: 'Node', name },
      }));
    },
  },

  // The controller's other watch, and cleanup's pods.
  {
    name: 'DaemonSet LIST, WATCH and streaming list by name (fieldSelector): the controller\'s rollout view',
    sends: [
      `GET ${DAEMONSETS}?fieldSelector&limit`, `GET ${DAEMONSETS}?allowWatchBookmarks&fieldSelector&resourceVersion&timeoutSeconds&watch`,
      `GET ${DAEMONSETS}?allowWatchBookmarks&fieldSelector&resourceVersionMatch&sendInitialEvents&timeoutSeconds&watch`,
    ],
    product: 'cli/controller-command.ts (the agent DaemonSet by name), controller/agent-rollout.ts agentDaemonSet',
    expect: 'ok',
    async run(ctx) {
      const name = ctx.name('ds');
      const path = `/apis/apps/v1/namespaces/${ctx.namespace}/daemonsets`;
      const labels = { 'app.kubernetes.io/name': name };
      for (const n of [name, ctx.name('ds-other')]) {
        const created = await ctx.target.send({
          method: 'POST', path, body: {
            apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: n },
            spec: {
              selector: { matchLabels: { ...labels, 'nodepulse.io/ds': n } },
              template: {
                metadata: { labels: { ...labels, 'nodepulse.io/ds': n } },
                spec: { nodeSelector: { 'nodepulse.io/conformance-nowhere': 'true' }, containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.9' }] },
              },
            },
          },
        });
        assert.equal(created.status, 201, `precondition: DaemonSet ${n} must be created: ${created.body}`);
        await ctx.target.settle('daemonset', `${path}/${n}`);
      }
      const source = kubeListWatch<DaemonSetObject & { metadata: { name?: string; resourceVersion?: string } }>({ client: ctx.client(), path, fieldSelector: `metadata.name=${name}` });
      const page = await source.list({ signal: new AbortController().signal, limit: 500 });
      const annotate = (n: string): Promise<ApiAnswer> => ctx.target.send({ method: 'PATCH', path: `${path}/${n}`, contentType: MERGE, body: { metadata: { annotations: { 'nodepulse.io/conformance': 'touched' } } } });
      const touched = await annotate(name);
      assert.equal(touched.status, 200, `precondition: DaemonSet ${name} must be annotated: ${touched.body}`);
      const events = await watchToEnd(ctx.client(), path, { fieldSelector: `metadata.name=${name}`, resourceVersion: page.metadata.resourceVersion ?? '' }, {
        live: () => annotate(ctx.name('ds-other')),
      });
      const streamed = await streamingListUntil(source, { done: () => true });
      return { outcome: 'ok', read: { list: listAsRead(page, agentDaemonSet), watch: watchAsRead(events as WatchEvent<DaemonSetObject>[], agentDaemonSet), streamingList: watchAsRead(streamed, agentDaemonSet) } };
    },
  },
  {
    name: 'Pod LIST by label in the agent namespace (cleanup waits for the agents to go)',
    sends: [`GET ${PODS}${LIST_QUERY}`],
    product: 'cli/cleanup-command.ts #listPods',
    expect: 'ok',
    async run(ctx) {
      const path = `/api/v1/namespaces/${ctx.namespace}/pods`;
      const agents = { 'app.kubernetes.io/name': ctx.name('agent') };
      for (const [what, labels] of [['pod-agent', agents], ['pod-other', { 'app.kubernetes.io/name': 'other' }]] as const) {
        const name = ctx.name(what);
        const created = await ctx.target.send({
          method: 'POST', path, body: {
            apiVersion: 'v1', kind: 'Pod', metadata: { name, labels },
            spec: { serviceAccountName: 'nobody', automountServiceAccountToken: false, containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.9' }] },
          },
        });
        assert.equal(created.status, 201, `precondition: Pod ${name} must be created: ${created.body}`);
        ctx.defer(() => ctx.target.send({ method: 'DELETE', path: `${path}/${name}`, query: { gracePeriodSeconds: '0' } }));
      }
      const source = kubeListWatch<{ metadata: { name?: string } }>({ client: ctx.client(), path, labelSelector: `app.kubernetes.io/name=${ctx.name('agent')}` });
      return observe(() => source.list({ signal: new AbortController().signal, limit: 500 }), (page) => listAsRead(page, (p) => p.metadata.name));
    },
  },
];
