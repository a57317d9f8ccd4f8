// A strict in-memory RuntimeClient for unit tests of everything above cri/.
//
// Every relist() call is parked as a pending call that the test answers (answer / fail) or
// leaves hanging, so a test controls exactly when the runtime "answers" relative to its manual
// clock. Calls the test did not script (version, status, the single listings) throw, so a
// component that starts calling something new fails its tests until they say so. version()
// answers versionAnswer when set ('hang': never, until the call's signal aborts), and counts
// its calls.
import { CriError, type CriErrorOptions, type CriFaultCode } from '../../cri/cri-error.ts';
import type {
  CallOptions,
  Container,
  Listing,
  PodSandbox,
  RuntimeClient,
  RuntimeStatus,
  RuntimeVersion,
} from '../../cri/types.ts';

export interface PendingRelist {
  readonly options: CallOptions;
  answer(listing?: Partial<Listing>): void;
  /** Fails it with a CriError of this code, message (also its detail) and options (a gRPC status, a known cause). */
  fail(code: CriFaultCode, message?: string, options?: CriErrorOptions): void;
}

export class ScriptedRuntimeClient implements RuntimeClient {
  readonly endpoint: string;
  /** Relists asked and not yet answered, oldest first. */
  readonly pending: PendingRelist[] = [];
  /** How many relists were asked in all. */
  relistCalls = 0;
  /** When set, status() answers this; otherwise status() is unexpected and throws. */
  statusAnswer: RuntimeStatus | CriError | undefined;
  /** When set, version() answers this; otherwise version() is unexpected and throws. */
  versionAnswer: RuntimeVersion | CriError | 'hang' | undefined;
  /** How many version() calls were made. */
  versionCalls = 0;
  closed = false;

  constructor(endpoint = 'unix:///scripted/runtime.sock') {
    this.endpoint = endpoint;
  }

  relist(options: CallOptions): Promise<Listing> {
    this.relistCalls++;
    return new Promise<Listing>((resolve, reject) => {
      const entry: PendingRelist = {
        options,
        answer: (listing = {}) => {
          this.#remove(entry);
          resolve({ sandboxes: listing.sandboxes ?? [], containers: listing.containers ?? [], bytes: listing.bytes ?? 0 });
        },
        fail: (code, message = `scripted ${code}`, options = {}) => {
          this.#remove(entry);
          reject(new CriError(code, message, options));
        },
      };
      this.pending.push(entry);
      options.signal?.addEventListener('abort', () => {
        this.#remove(entry);
        reject(options.signal?.reason);
      }, { once: true });
    });
  }

  /** The oldest pending relist; throws when none is pending (a test expecting a call that never came). */
  next(): PendingRelist {
    const first = this.pending[0];
    if (first === undefined) throw new Error('ScriptedRuntimeClient: no relist is pending');
    return first;
  }

  status(_options: CallOptions): Promise<RuntimeStatus> {
    const answer = this.statusAnswer;
    if (answer === undefined) return Promise.reject(new Error('ScriptedRuntimeClient: status() was not expected'));
    return answer instanceof CriError ? Promise.reject(answer) : Promise.resolve(answer);
  }

  version(options: CallOptions): Promise<RuntimeVersion> {
    this.versionCalls++;
    const answer = this.versionAnswer;
    if (answer === undefined) return Promise.reject(new Error('ScriptedRuntimeClient: version() was not expected'));
    if (answer === 'hang') {
      return new Promise<RuntimeVersion>((_, reject) => {
        options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
      });
    }
    return answer instanceof CriError ? Promise.reject(answer) : Promise.resolve(answer);
  }

  listPodSandbox(_options: CallOptions): Promise<{ items: readonly PodSandbox[]; bytes: number }> {
    return Promise.reject(new Error('ScriptedRuntimeClient: listPodSandbox() was not expected'));
  }

  listContainers(_options: CallOptions): Promise<{ items: readonly Container[]; bytes: number }> {
    return Promise.reject(new Error('ScriptedRuntimeClient: listContainers() was not expected'));
  }

  podSandboxStatus(): Promise<never> {
    return Promise.reject(new Error('ScriptedRuntimeClient: podSandboxStatus() was not expected'));
  }

  containerStatus(): Promise<never> {
    return Promise.reject(new Error('ScriptedRuntimeClient: containerStatus() was not expected'));
  }

  close(): void {
    this.closed = true;
  }

  #remove(entry: PendingRelist): void {
    const i = this.pending.indexOf(entry);
    if (i >= 0) this.pending.splice(i, 1);
  }
}

/** A container record for tests. */
export function testContainer(id: string, state: Container['state'], podSandboxId = 'pod-1', name = id): Container {
  return { id, podSandboxId, name, attempt: 0, state, createdAtNs: 1_700_000_000_000_000_000n };
}

/** A sandbox record for tests. */
export function testSandbox(id: string, state: PodSandbox['state'], name = id): PodSandbox {
  return { id, name, namespace: 'default', uid: `uid-${id}`, attempt: 0, state, createdAtNs: 1_700_000_000_000_000_000n };
}
