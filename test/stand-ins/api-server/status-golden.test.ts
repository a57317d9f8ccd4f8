// Golden tests: the stand-in's status codes and metav1.Status bodies, byte for byte, over real
// HTTP. Each case cites the upstream source whose wording and shape it follows (paths are in
// kubernetes/kubernetes). Dynamic parts (uids) are avoided by construction.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { ManualClock } from '../../../src/clock/manual-clock.ts';

const NS = 'nodepulse';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const TOKEN = 'golden-token';
const USER = 'system:serviceaccount:nodepulse:nodepulse';

let server: ApiServerHandle;

async function call(method: string, path: string, body?: unknown, contentType = 'application/json', token: string | null = TOKEN): Promise<{ status: number; text: string; headers: Headers }> {
  const headers: Record<string, string> = { 'Content-Type': contentType };
  if (token !== null) headers['Authorization'] = `Bearer ${token}`;
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

function status(code: number, message: string, reason: string, details?: object): string {
  return JSON.stringify({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason,
    ...(details === undefined ? {} : { details }), code,
  });
}

const leaseDetails = (name: string): object => ({ name, group: 'coordination.k8s.io', kind: 'leases' });

async function seedLease(name: string): Promise<string> {
  const created = await call('POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
  assert.equal(created.status, 201, `precondition: lease ${name} is created: ${created.text}`);
  return (JSON.parse(created.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

before(async () => {
  server = await startApiServer({ clock: new ManualClock(), tokens: { [TOKEN]: USER } });
});
after(async () => {
  await server.close();
});

describe('Status bodies of the stand-in', () => {
  it('a GET of a missing lease is 404 NotFound naming the qualified resource', async () => {
    // staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go NewNotFound
    const r = await call('GET', `${LEASES}/missing`);
    assert.equal(r.status, 404);
    assert.equal(r.text, status(404, 'leases.coordination.k8s.io "missing" not found', 'NotFound', leaseDetails('missing')));
  });

  it('a GET of a missing node is 404 with the bare core resource', async () => {
    // errors.go NewNotFound; schema.GroupResource.String() drops an empty group
    const r = await call('GET', '/api/v1/nodes/ghost');
    assert.equal(r.text, status(404, 'nodes "ghost" not found', 'NotFound', { name: 'ghost', kind: 'nodes' }));
  });

  it('a PATCH to a missing lease is 404, never a create', async () => {
    // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go: patch reads the object first
    const r = await call('PATCH', `${LEASES}/nope`, { spec: { renewTime: '2026-01-02T03:04:05.000000Z' } }, 'application/merge-patch+json');
    assert.equal(r.status, 404);
    assert.equal(r.text, status(404, 'leases.coordination.k8s.io "nope" not found', 'NotFound', leaseDetails('nope')));
  });

  it('creating a lease twice is 409 AlreadyExists', async () => {
    // errors.go NewAlreadyExists
    await seedLease('dup');
    const r = await call('POST', LEASES, { metadata: { name: 'dup' }, spec: {} });
    assert.equal(r.status, 409);
    assert.equal(r.text, status(409, 'leases.coordination.k8s.io "dup" already exists', 'AlreadyExists', leaseDetails('dup')));
  });

  it('a PUT with a stale resourceVersion is 409 Conflict with the optimistic-lock message', async () => {
    // errors.go NewConflict; registry/generic/registry/store.go OptimisticLockErrorMsg
    const rv = await seedLease('stale');
    const first = await call('PUT', `${LEASES}/stale`, { metadata: { name: 'stale', resourceVersion: rv }, spec: { holderIdentity: 'a' } });
    assert.equal(first.status, 200, 'precondition: the first conditional update succeeds');
    const r = await call('PUT', `${LEASES}/stale`, { metadata: { name: 'stale', resourceVersion: rv }, spec: { holderIdentity: 'b' } });
    assert.equal(r.status, 409);
    assert.equal(r.text, status(409,
      'Operation cannot be fulfilled on leases.coordination.k8s.io "stale": the object has been modified; please apply your changes to the latest version and try again',
      'Conflict', leaseDetails('stale')));
  });

  it('a PUT without resourceVersion on an existing lease is 422: leases allow no unconditional update', async () => {
    // registry/generic/registry/store.go Update (qualifiedKind carries the resource, see #18526);
    // pkg/registry/coordination/lease/strategy.go AllowUnconditionalUpdate() == false;
    // apimachinery/pkg/util/validation/field/errors.go ErrorBody prints uint64 0 with %#v as 0x0
    await seedLease('uncond');
    const r = await call('PUT', `${LEASES}/uncond`, { metadata: { name: 'uncond' }, spec: { holderIdentity: 'x' } });
    assert.equal(r.status, 422);
    assert.equal(r.text, status(422,
      'leases.coordination.k8s.io "uncond" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      'Invalid', {
        name: 'uncond', group: 'coordination.k8s.io', kind: 'leases',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }],
      }));
  });

  it('a PUT to a missing lease creates it with 201', async () => {
    // lease strategy AllowCreateOnUpdate() == true; handlers/update.go answers 201 when created
    const r = await call('PUT', `${LEASES}/fresh`, { metadata: { name: 'fresh' }, spec: { holderIdentity: 'fresh', leaseDurationSeconds: 40 } });
    assert.equal(r.status, 201);
    const body = JSON.parse(r.text) as { kind: string; metadata: Record<string, unknown>; spec: unknown };
    assert.equal(body.kind, 'Lease');
    assert.deepEqual(Object.keys(body.metadata), ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']);
    assert.equal(body.metadata['creationTimestamp'], '2026-01-02T03:04:05Z');
  });

  it('a leaseDurationSeconds of 0 and a bad name are 422 Invalid with one cause each', async () => {
    // pkg/apis/coordination/validation/validation.go ValidateLeaseSpec; apimachinery
    // util/validation/validation.go IsDNS1123Subdomain; errors.go NewInvalid aggregates as [a, b]
    const r = await call('POST', LEASES, { metadata: { name: 'Bad_Name' }, spec: { leaseDurationSeconds: 0 } });
    assert.equal(r.status, 422);
    const dns = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert.equal(r.text, status(422,
      `Lease.coordination.k8s.io "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": ${dns}, spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0]`,
      'Invalid', {
        name: 'Bad_Name', group: 'coordination.k8s.io', kind: 'Lease',
        causes: [
          { reason: 'FieldValueInvalid', message: `Invalid value: "Bad_Name": ${dns}`, field: 'metadata.name' },
          { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0', field: 'spec.leaseDurationSeconds' },
        ],
      }));
  });

  it('a generateName is a prefix of a subdomain: a trailing dot is 422 on metadata.generateName, a trailing dash is kept', async () => {
    // apimachinery/pkg/api/validation/objectmeta.go ValidateObjectMetaAccessor checks generateName
    // with prefix=true; generic.go NameIsDNSSubdomain masks one trailing '-' before the rule
    const dotted = await call('POST', LEASES, { metadata: { generateName: 'np-flow.' } });
    assert.equal(dotted.status, 422);
    const body = JSON.parse(dotted.text) as { message: string; details: { causes: Array<{ field: string; message: string }> } };
    assert.deepEqual(body.details.causes.map((c) => c.field), ['metadata.generateName']);
    assert.match(body.message, /^Lease\.coordination\.k8s\.io "np-flow\.[a-z0-9]{5}" is invalid: metadata\.generateName: Invalid value: "np-flow\.": a lowercase RFC 1123 subdomain/);
    const dashed = await call('POST', LEASES, { metadata: { generateName: 'np-flow-' } });
    assert.equal(dashed.status, 201, dashed.text);
    assert.match((JSON.parse(dashed.text) as { metadata: { name: string } }).metadata.name, /^np-flow-[a-z0-9]{5}$/);
  });

  it('a renewTime without six fractional digits in a create is 400 with Go\'s time.Parse message', async () => {
    // apimachinery/pkg/apis/meta/v1/micro_time.go UnmarshalJSON parses RFC3339Micro;
    // endpoints/handlers/rest.go transformDecodeError wraps it; src/time/format.go ParseError
    const r = await call('POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'micro' }, spec: { renewTime: '2026-01-02T03:04:05.123Z' } });
    assert.equal(r.status, 400);
    assert.equal(r.text, status(400,
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-02T03:04:05.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
      'BadRequest'));
  });

  it('a renewTime with no fraction in a PUT is 400 too', async () => {
    // as above: the layout's .000000 needs the dot and six digits
    const r = await call('PUT', `${LEASES}/micro2`, { metadata: { name: 'micro2' }, spec: { renewTime: '2026-01-02T03:04:05Z' } });
    assert.equal(r.status, 400);
    assert.equal(r.text, status(400,
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-02T03:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
      'BadRequest'));
  });

  it('a merge PATCH with a bad renewTime is 422 Invalid on the field patch, as the patch handler reports it', async () => {
    // endpoints/handlers/patch.go jsonPatcher.applyPatchToCurrentObject: a patched object that
    // fails to decode is NewInvalid(GroupKind{}, "", field.Invalid("patch", patchedJS, err))
    await seedLease('pm');
    const r = await call('PATCH', `${LEASES}/pm`, { spec: { renewTime: '2026-01-02T03:04:05.1234567Z' } }, 'application/merge-patch+json');
    assert.equal(r.status, 422);
    const body = JSON.parse(r.text) as { message: string; reason: string; details: { causes: { field: string; message: string }[] } };
    assert.equal(body.reason, 'Invalid');
    assert.match(body.message, /^ "" is invalid: patch: Invalid value: "\{.*\}": parsing time "2026-01-02T03:04:05.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7Z" as "Z07:00"$/);
    assert.equal(body.details.causes[0]?.field, 'patch');
  });

  it('a request without a bearer token is 401 Unauthorized', async () => {
    // endpoints/handlers/responsewriters/errors.go; apiserver/pkg/endpoints/filters/authentication.go Unauthorized
    const r = await call('GET', `${LEASES}/x`, undefined, 'application/json', null);
    assert.equal(r.status, 401);
    assert.equal(r.text, status(401, 'Unauthorized', 'Unauthorized'));
  });

  it('a request with an unknown token is 401 Unauthorized', async () => {
    const r = await call('GET', '/api', undefined, 'application/json', 'wrong');
    assert.equal(r.text, status(401, 'Unauthorized', 'Unauthorized'));
  });

  it('a verb the rules deny is 403 Forbidden worded as ForbiddenStatusError words it', async () => {
    // endpoints/handlers/responsewriters/errors.go ForbiddenStatusError; errors.go NewForbidden
    server.auth.setRules([{ user: USER, verbs: ['get', 'list', 'watch'], resources: ['leases'] }]);
    try {
      const r = await call('PATCH', `${LEASES}/x`, {}, 'application/merge-patch+json');
      assert.equal(r.status, 403);
      assert.equal(r.text, status(403,
        `leases.coordination.k8s.io "x" is forbidden: User "${USER}" cannot patch resource "leases" in API group "coordination.k8s.io" in the namespace "nodepulse"`,
        'Forbidden', leaseDetails('x')));
      const n = await call('PATCH', '/api/v1/nodes/n1/status', {}, 'application/strategic-merge-patch+json');
      assert.equal(n.text, status(403,
        `nodes "n1" is forbidden: User "${USER}" cannot patch resource "nodes/status" in API group "" at the cluster scope`,
        'Forbidden', { name: 'n1', kind: 'nodes' }));
    } finally {
      server.auth.setRules(undefined);
    }
  });

  it('an unsupported patch type is 415 listing the accepted ones', async () => {
    // endpoints/handlers/negotiation/errors.go NewUnsupportedMediaTypeError; endpoints/installer.go supportedTypes
    const r = await call('PATCH', `${LEASES}/x`, '{}', 'application/json');
    assert.equal(r.status, 415);
    assert.equal(r.text, status(415,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
      'UnsupportedMediaType'));
  });

  it('an unsupported body type on create is 415 listing the serializers', async () => {
    // negotiation.NegotiateInputSerializer → NewUnsupportedMediaTypeError(SupportedMediaTypes())
    const r = await call('POST', LEASES, 'x', 'text/plain');
    assert.equal(r.text, status(415,
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      'UnsupportedMediaType'));
  });

  it('a method the path does not take is 405 MethodNotAllowed with empty details', async () => {
    // apiserver/pkg/server/handler.go serviceErrorHandler → errors.go NewGenericServerResponse(405)
    const r = await call('DELETE', '/api/v1/nodes/n1/status');
    assert.equal(r.status, 405);
    assert.equal(r.text, status(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed', {}));
  });

  it('an unknown path is 404 with NewGenericServerResponse\'s wording', async () => {
    // errors.go NewGenericServerResponse(404)
    const r = await call('GET', '/apis/apps/v1/deployments');
    assert.equal(r.text, status(404, 'the server could not find the requested resource', 'NotFound', {}));
  });

  it('an injected 429 carries Retry-After and TooManyRequests details', async () => {
    // errors.go NewTooManyRequests
    server.faults.failNext(1, `PATCH ${LEASES}/*`, 429, { retryAfterSeconds: 3 });
    const r = await call('PATCH', `${LEASES}/x`, {}, 'application/merge-patch+json');
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '3');
    assert.equal(r.text, status(429, 'Too many requests, please try again later.', 'TooManyRequests', { retryAfterSeconds: 3 }));
  });

  it('an injected 429 in plain text is what the max-in-flight filter sends', async () => {
    // apiserver/pkg/server/filters/maxinflight.go tooManyRequests: http.Error with Retry-After
    server.faults.failNext(1, `GET ${LEASES}`, 429, { retryAfterSeconds: 1, plainText: true });
    const r = await call('GET', LEASES);
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal(r.text, 'Too many requests, please try again later.\n');
  });

  it('an injected 500 and 503 use NewGenericServerResponse\'s wording', async () => {
    // errors.go NewGenericServerResponse
    server.faults.failNext(1, `GET ${LEASES}/a`, 500, { message: 'etcdserver: request timed out' });
    server.faults.failNext(1, `GET ${LEASES}/a`, 503);
    const a = await call('GET', `${LEASES}/a`);
    assert.equal(a.text, status(500, 'etcdserver: request timed out', 'InternalError', {}));
    const b = await call('GET', `${LEASES}/a`);
    assert.equal(b.text, status(503, 'the server is currently unable to handle the request', 'ServiceUnavailable', {}));
  });

  // The cases below are the real kube-apiserver v1.34.4's answers, as the conformance table
  // (test/cluster/conformance-table.ts) and requests sent to it by hand showed them.

  it('a PUT of a lease deleted since it was read is 409: the uid it carries is a precondition, never a create', async () => {
    // store.go Update: the object's uid is a precondition of GuaranteedUpdate, checked against the missing object
    await seedLease('gone');
    const read = JSON.parse((await call('GET', `${LEASES}/gone`)).text) as { metadata: Record<string, string> };
    assert.equal((await call('DELETE', `${LEASES}/gone`)).status, 200, 'precondition: the lease is deleted');
    const r = await call('PUT', `${LEASES}/gone`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: read.metadata, spec: {} });
    assert.equal(r.status, 409);
    assert.equal(r.text, status(409,
      `Operation cannot be fulfilled on leases.coordination.k8s.io "gone": StorageError: invalid object, Code: 4, Key: /registry/leases/${NS}/gone, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${read.metadata['uid'] ?? ''}, UID in object meta: `,
      'Conflict', leaseDetails('gone')));
    assert.equal((await call('GET', `${LEASES}/gone`)).status, 404, 'nothing was created');
  });

  it('a DELETE is answered with a Success Status naming what was deleted, not the object', async () => {
    // handlers/delete.go: the object is gone at once, so the answer is a Status
    await seedLease('deleted');
    const uid = (JSON.parse((await call('GET', `${LEASES}/deleted`)).text) as { metadata: { uid: string } }).metadata.uid;
    const r = await call('DELETE', `${LEASES}/deleted`);
    assert.equal(r.status, 200);
    assert.equal(r.text, JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'deleted', group: 'coordination.k8s.io', kind: 'leases', uid } }));
  });

  it('an events.k8s.io Event whose note is over 1024 bytes is 422 on the field message, named as the core Event', async () => {
    // pkg/apis/core/validation/events.go: NoteLengthLimit, counted in bytes (len of a Go string)
    const event = {
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'n.1' }, eventTime: '2026-01-02T03:04:05.000000Z', reportingController: 'nodepulse.io/agent',
      reportingInstance: 'i', action: 'SetCondition', reason: 'RelistHealthy', type: 'Normal', note: 'é'.repeat(513), regarding: { apiVersion: 'v1', kind: 'Node', name: 'n' },
    };
    const r = await call('POST', `/apis/events.k8s.io/v1/namespaces/default/events`, event);
    assert.equal(r.status, 422);
    const cause = { reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 1024 characters', field: 'message' };
    assert.equal(r.text, status(422, 'Event "n.1" is invalid: message: Invalid value: "": can have at most 1024 characters', 'Invalid', { name: 'n.1', kind: 'Event', causes: [cause] }));
    const long = await call('POST', `/apis/events.k8s.io/v1/namespaces/default/events`, { ...event, reportingInstance: 'i'.repeat(129), note: 'x'.repeat(1024) });
    assert.match(long.text, /"Event \\"n.1\\" is invalid: reportingInstance: Invalid value: \\"\\": can have at most 128 characters"/);
    assert.equal((await call('POST', `/apis/events.k8s.io/v1/namespaces/default/events`, { ...event, note: 'x'.repeat(1024) })).status, 201, 'a note of exactly 1024 bytes is taken');
  });

  it('a list with limit pages in key order, with a continue token, and remainingItemCount only without a selector', async () => {
    // etcd3 store GetList; the token is base64url JSON of the list's revision and the key after which to go on
    const own = await startApiServer({ clock: new ManualClock() });
    try {
      for (const name of ['c', 'a', 'b']) own.store.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NS, labels: { x: 'y' } }, spec: {} });
      const list = async (query: string): Promise<{ metadata: Record<string, unknown>; items: Array<{ metadata: { name: string } }> }> => {
        const res = await fetch(`${own.url}${LEASES}?${query}`, { signal: AbortSignal.timeout(5000) });
        assert.equal(res.status, 200, `precondition: the list is answered (${query})`);
        return JSON.parse(await res.text()) as { metadata: Record<string, unknown>; items: Array<{ metadata: { name: string } }> };
      };
      const first = await list('limit=2');
      assert.deepEqual(first.items.map((i) => i.metadata.name), ['a', 'b']);
      assert.equal(first.metadata['remainingItemCount'], 1);
      assert.deepEqual(JSON.parse(Buffer.from(String(first.metadata['continue']), 'base64url').toString('utf8')),
        { v: 'meta.k8s.io/v1', rv: Number(first.metadata['resourceVersion']), start: '/b\u0000' });
      const rest = await list(`limit=2&continue=${String(first.metadata['continue'])}`);
      assert.deepEqual(rest.items.map((i) => i.metadata.name), ['c']);
      assert.deepEqual(rest.metadata, { resourceVersion: first.metadata['resourceVersion'] }, 'the last page: no continue, no count');
      const selected = await list('limit=2&labelSelector=x%3Dy');
      assert.deepEqual([selected.metadata['remainingItemCount'], typeof selected.metadata['continue']], [undefined, 'string'], 'a token, but no count under a selector');
    } finally {
      await own.close();
    }
  });

  it('a later page lists the first page\'s revision (a snapshot), whatever was written since', async () => {
    const own = await startApiServer({ clock: new ManualClock() });
    try {
      const lease = (name: string, holder = name): Record<string, unknown> => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NS }, spec: { holderIdentity: holder } });
      for (const name of ['a', 'b', 'c']) own.store.put(lease(name));
      const get = async (query: string): Promise<{ metadata: { resourceVersion: string; continue?: string }; items: Array<{ metadata: { name: string }; spec: { holderIdentity: string } }> }> =>
        JSON.parse(await (await fetch(`${own.url}${LEASES}?${query}`, { signal: AbortSignal.timeout(5000) })).text()) as never;
      const page1 = await get('limit=1');
      own.store.delete('leases', NS, 'c');
      own.store.put(lease('b', 'changed'));
      own.store.put(lease('d'));
      const page2 = await get(`limit=10&continue=${page1.metadata.continue ?? ''}`);
      assert.equal(page2.metadata.resourceVersion, page1.metadata.resourceVersion);
      assert.deepEqual(page2.items.map((i) => [i.metadata.name, i.spec.holderIdentity]), [['b', 'b'], ['c', 'c']], 'b before its change, c before its deletion, no d');
    } finally {
      await own.close();
    }
  });

  it('a continue token stays good for 5 minutes, however far the watch history has rolled, as etcd keeps a revision until compaction', async () => {
    const own = new ManualClock();
    const small = await startApiServer({ clock: own, historySize: 1 });
    try {
      const lease = (name: string): Record<string, unknown> => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NS }, spec: {} });
      for (const name of ['a', 'b', 'c']) small.store.put(lease(name));
      const get = async (query: string): Promise<{ status: number; body: { metadata: { resourceVersion?: string; continue?: string }; items?: Array<{ metadata: { name: string } }> } }> => {
        const res = await fetch(`${small.url}${LEASES}?${query}`, { signal: AbortSignal.timeout(5000) });
        return { status: res.status, body: JSON.parse(await res.text()) as never };
      };
      const first = await get('limit=1');
      for (const name of ['d', 'e', 'f']) small.store.put(lease(name));
      assert.ok((small.store.oldestWatchableVersion() ?? 0) > Number(first.body.metadata.resourceVersion), 'precondition: the history no longer reaches the first page');
      await own.advance(5 * 60_000);
      const second = await get(`limit=5&continue=${first.body.metadata.continue ?? ''}`);
      assert.deepEqual([second.status, second.body.items?.map((i) => i.metadata.name)], [200, ['b', 'c']]);
      await own.advance(1);
      assert.equal((await get(`limit=5&continue=${first.body.metadata.continue ?? ''}`)).status, 410, 'past 5 minutes the token is expired');
    } finally {
      await small.close();
    }
  });

  it('a continue token older than the history is 410 Expired, with a token to go on inconsistently', async () => {
    // etcd3 store: a continue token whose revision was compacted
    const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: '/page-a\u0000' })).toString('base64url');
    const small = await startApiServer({ clock: new ManualClock(), historySize: 1 });
    try {
      for (const name of ['x', 'y']) small.store.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NS }, spec: {} });
      const res = await fetch(`${small.url}${LEASES}?limit=1&continue=${token}`, { signal: AbortSignal.timeout(5000) });
      assert.equal(res.status, 410);
      const again = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -1, start: '/page-a\u0000' })).toString('base64url');
      assert.equal(await res.text(), JSON.stringify({
        kind: 'Status', apiVersion: 'v1', metadata: { continue: again }, status: 'Failure',
        message: 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        reason: 'Expired', code: 410,
      }));
    } finally {
      await small.close();
    }
  });

  it('a body over 3 MiB is 413', async () => {
    // apiserver/pkg/server/config.go MaxRequestBodyBytes = 3 MiB; errors.go NewRequestEntityTooLargeError
    const r = await call('POST', LEASES, 'x'.repeat(3 * 1024 * 1024 + 1));
    assert.equal(r.text, status(413, 'Request entity too large: limit is 3145728', 'RequestEntityTooLarge'));
  });
});
