// One renewal attempt of a node's Lease, as kubelet's lease controller writes its own
// (component-helpers/apimachinery/lease/controller.go), with the changes docs/design.md gives:
//
// | step                                  | request                                               |
// |---------------------------------------|-------------------------------------------------------|
// | owner reference not known to be set   | GET node (its uid), once, before the write            |
// | renew                                 | PATCH merge-patch: spec.renewTime, holderIdentity,    |
// |                                       | leaseDurationSeconds (+ metadata.ownerReferences)     |
// | the PATCH says 404 (no lease)         | GET node afresh (unless read in this attempt), POST   |
// |                                       | the lease with labels and the owner reference         |
// | the POST says 409 AlreadyExists       | PATCH again (someone created it in between)           |
//
// - The write is a JSON merge patch without resourceVersion, so it is unconditional: a
//   heartbeat is last-writer-wins and a lost compare-and-swap must never read as a dead node.
//   No GET per renewal: nothing in the write depends on the stored object.
// - The guard is asked at the start of the attempt (before its first request) and again just
//   before EVERY write request (each PATCH and POST), so a renewal held up by a slow API or a
//   slow Node read never lands after the runtime aged out.
//   The writer knows no gate: the guard (NodeLease's gate watch, gate-watch.ts) throws when no
//   write may be sent, and its signal cancels a request in flight; either ends the attempt with
//   a rejection, the one route by which "withheld" comes back.
// - renewTime is stamped just before the request is sent, as max(wall now, last stamped +
//   1 µs). "Last stamped" counts writes that failed too: a write that timed out may still have
//   landed, and the next must still move forward.
// - The owner reference is { apiVersion: v1, kind: Node, name, uid } with neither
//   `controller` nor `blockOwnerDeletion`, as kubelet sets it on its node lease: the Node does
//   not control the Lease (it only owns it, so the garbage collector deletes the Lease with the
//   Node), and blockOwnerDeletion would need update rights on nodes/finalizers under the
//   OwnerReferencesPermissionEnforcement admission plugin. The uid is read afresh for every
//   create: a Node re-registered under the same name has a new uid, and an old one would get
//   the new Lease garbage-collected. If the Node cannot be read, the Lease is created without
//   the reference, and the reference is added by a later renewal's patch. At start the state
//   of the reference is unknown (a previous run may have created the Lease without one, or
//   for an older Node), so the first renewal of a process reads the Node once and sets it.
//
// Failure modes: every request error is thrown as the client's KubeApiError for NodeLease to
// judge (back off, honour Retry-After, count conflicts). A failed Node read is not an error
// of the renewal: it only leaves the reference to a later one.
import type { Clock } from '../clock/clock.ts';
import { isAborted, isAlreadyExists, isNotFound } from '../kube/kube-api-error.ts';
import type { CallOptions } from '../kube/kube-client.ts';
import type { Lease, Node, OwnerReference } from '../kube/kube-types.ts';
import { formatMicroTime } from '../kube/meta-time.ts';

/** The calls the writer makes; KubeClient has them. */
export interface LeaseApi {
  patchLease(namespace: string, name: string, patch: unknown, options?: CallOptions): Promise<Lease>;
  createLease(namespace: string, lease: Lease, options?: CallOptions): Promise<Lease>;
  getNode(name: string, options?: CallOptions): Promise<Node>;
}

/** Labels every agent lease carries: readers select agent leases by label, never by namespace alone. */
export const LEASE_LABELS: Readonly<Record<string, string>> = {
  'app.kubernetes.io/name': 'nodepulse',
  'nodepulse.io/role': 'node-lease',
};

export interface LeaseWriterOptions {
  readonly client: LeaseApi;
  readonly clock: Clock;
  readonly namespace: string;
  readonly nodeName: string;
  readonly leaseDurationSeconds: number;
}

/** What an attempt asks before each request (NodeLease's is the gate watch, gate-watch.ts). */
export interface WriteGuard {
  /** Cancels the request in flight when it aborts. */
  readonly signal: AbortSignal;
  /** Throws when no request may be sent now. */
  check(): void;
}

export type WriteOutcome =
  | {
      readonly kind: 'renewed';
      /** The renewTime written (MicroTime). */
      readonly renewTime: string;
      readonly renewMicros: number;
      /** Whether the Lease had to be created. */
      readonly created: boolean;
      /** Whether this write set the owner reference (on a create or a patch). */
      readonly ownerReferenceWritten: boolean;
      /** A 409 AlreadyExists was met on the way (a create race). */
      readonly alreadyExists: boolean;
    };

type OwnerState = 'unknown' | 'set' | 'missing';

export class LeaseWriter {
  readonly #options: LeaseWriterOptions;
  #lastStampedMicros: number | undefined;
  #owner: OwnerState = 'unknown';

  constructor(options: LeaseWriterOptions) {
    this.#options = options;
  }

  /**
   * One renewal attempt. guard.check() is called before the first request and just before each
   * write request; when it throws, the attempt stops with nothing (more) written and rejects with
   * what it threw. Rejects with the client's error when a request fails.
   */
  async renew(guard: WriteGuard): Promise<WriteOutcome> {
    const { client, namespace, nodeName } = this.#options;
    const signal = guard.signal;
    let ref: OwnerReference | undefined;
    let nodeRead = false;
    if (this.#owner !== 'set') {
      guard.check();
      ref = await this.#readOwner(signal);
      nodeRead = true;
    }

    guard.check();
    try {
      return await this.#patch(ref, signal, false, false);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }

    // No lease: create it, with the Node's uid read afresh for this create.
    if (!nodeRead) ref = await this.#readOwner(signal);
    guard.check();
    const micros = this.#stamp();
    const renewTime = formatMicroTime(micros);
    const lease: Lease = {
      metadata: {
        name: nodeName,
        namespace,
        labels: { ...LEASE_LABELS },
        ...(ref === undefined ? {} : { ownerReferences: [ref] }),
      },
      spec: {
        holderIdentity: nodeName,
        leaseDurationSeconds: this.#options.leaseDurationSeconds,
        acquireTime: renewTime,
        renewTime,
      },
    };
    try {
      await client.createLease(namespace, lease, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Created by someone else between our PATCH and POST: renew it as usual.
      guard.check();
      return await this.#patch(ref, signal, false, true);
    }
    this.#owner = ref === undefined ? 'missing' : 'set';
    return {
      kind: 'renewed',
      renewTime,
      renewMicros: micros,
      created: true,
      ownerReferenceWritten: ref !== undefined,
      alreadyExists: false,
    };
  }

  async #patch(ref: OwnerReference | undefined, signal: AbortSignal, created: boolean, alreadyExists: boolean): Promise<WriteOutcome> {
    const { client, namespace, nodeName, leaseDurationSeconds } = this.#options;
    const micros = this.#stamp();
    const renewTime = formatMicroTime(micros);
    const patch = {
      ...(ref === undefined ? {} : { metadata: { ownerReferences: [ref] } }),
      spec: { holderIdentity: nodeName, leaseDurationSeconds, renewTime },
    };
    await client.patchLease(namespace, nodeName, patch, { signal });
    if (ref !== undefined) this.#owner = 'set';
    return {
      kind: 'renewed',
      renewTime,
      renewMicros: micros,
      created,
      ownerReferenceWritten: ref !== undefined,
      alreadyExists,
    };
  }

  /** The owner reference from a fresh read of the Node, or undefined when it cannot be read. */
  async #readOwner(signal: AbortSignal): Promise<OwnerReference | undefined> {
    const { client, nodeName } = this.#options;
    try {
      const node = await client.getNode(nodeName, { signal });
      const uid = node.metadata.uid;
      if (uid === undefined || uid === '') return undefined;
      return { apiVersion: 'v1', kind: 'Node', name: nodeName, uid };
    } catch (err) {
      if (isAborted(err)) throw err;
      return undefined; // the reference waits for a later renewal
    }
  }

  #stamp(): number {
    const micros = nextRenewMicros(this.#options.clock.wallMicros(), this.#lastStampedMicros);
    this.#lastStampedMicros = micros;
    return micros;
  }
}

/**
 * The renewTime to stamp now (docs/design.md): max(wall now, last stamped + 1 µs), so a wall clock
 * stepped backwards never moves a lease back, and two renewals are never the same bytes.
 */
export function nextRenewMicros(wallNowMicros: number, lastStampedMicros: number | undefined): number {
  const now = Math.floor(wallNowMicros);
  return lastStampedMicros === undefined ? now : Math.max(now, lastStampedMicros + 1);
}
