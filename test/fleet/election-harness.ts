// Electors on manual clocks against the real API stand-in (a loopback HTTP server).
//
// Each elector has its OWN ManualClock, so "on the others' clocks" is literal. The HTTP round
// trips are real, so after moving the clocks the harness waits (a bounded real poll) until no
// request of any elector is in flight; only then is the state read. Timing is decided by the
// manual clocks alone.
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { electionLeaseApi } from '../../src/election/election-lease-api.ts';
import { LeaderElector, type ElectionLeaseApi } from '../../src/election/leader-elector.ts';
import type { Term } from '../../src/election/term.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import type { Clock } from '../../src/clock/clock.ts';
import type { KubeAuth } from '../../src/kube/auth/kube-auth.ts';
import { leanAuth } from '../../src/kube/auth/lean-auth.ts';

export const NAMESPACE = 'nodepulse-system';

/** Credentials for the stand-in at `url`, reached directly, with no token. */
export function authFor(url: string, clock: Clock): KubeAuth {
  return leanAuth({ server: url, source: 'test', clock });
}

export interface Candidate {
  readonly id: string;
  readonly clock: ManualClock;
  readonly elector: LeaderElector;
  readonly client: KubeClient;
  readonly terms: Term[];
  inFlight: number;
}

const real = new SystemClock();

export class Election {
  readonly candidates: Candidate[] = [];
  readonly #url: string;

  constructor(url: string) {
    this.#url = url;
  }

  add(id: string, task?: (term: Term, c: Candidate) => void, startMonotonicMs = 0): Candidate {
    const clock = new ManualClock({ startMonotonicMs });
    const client = new KubeClient({ auth: authFor(this.#url, clock), clock });
    const inner = electionLeaseApi(client);
    const box: { candidate?: Candidate } = {};
    const track = <T>(p: Promise<T>): Promise<T> => {
      if (box.candidate !== undefined) box.candidate.inFlight++;
      return p.finally(() => {
        if (box.candidate !== undefined) box.candidate.inFlight--;
      });
    };
    const api: ElectionLeaseApi = {
      getLease: (ns, name, o) => track(inner.getLease(ns, name, o)),
      createLease: (ns, lease, o) => track(inner.createLease(ns, lease, o)),
      replaceLease: (ns, name, lease, o) => track(inner.replaceLease(ns, name, lease, o)),
    };
    const terms: Term[] = [];
    let seed = id.charCodeAt(id.length - 1);
    const elector = new LeaderElector({
      api,
      clock,
      identity: id,
      namespace: NAMESPACE,
      // A fixed pseudo-random sequence per elector: jitter is exercised, runs repeat.
      random: () => {
        seed = (seed * 48271) % 2147483647;
        return (seed % 1000) / 1000;
      },
      onStartedLeading: (term) => {
        terms.push(term);
        if (box.candidate !== undefined) task?.(term, box.candidate);
      },
    });
    const candidate: Candidate = { id, clock, elector, client, terms, inFlight: 0 };
    box.candidate = candidate;
    this.candidates.push(candidate);
    return candidate;
  }

  leaders(): string[] {
    return this.candidates.filter((c) => c.elector.isLeader()).map((c) => c.id);
  }

  /** Waits (real time, bounded) until no elector has a request in flight, three polls running. */
  async settle(): Promise<void> {
    let quiet = 0;
    for (let i = 0; i < 2_000; i++) {
      await real.sleep(1);
      quiet = this.candidates.some((c) => c.inFlight > 0) ? 0 : quiet + 1;
      if (quiet >= 3) return;
    }
    throw new Error('precondition: electors did not settle within the poll bound');
  }

  /** Moves every live clock by ms in steps of stepMs, settling after each; calls check after each step. */
  async run(ms: number, check: () => void = () => {}, stepMs = 100, only?: readonly Candidate[]): Promise<void> {
    const movers = only ?? this.candidates;
    for (let t = 0; t < ms; t += stepMs) {
      for (const c of movers) await c.clock.advance(stepMs);
      await this.settle();
      check();
    }
  }

  async close(): Promise<void> {
    for (const c of this.candidates) {
      await Promise.race([c.elector.abort(), this.#drive(c)]);
      c.client.close();
    }
  }

  async #drive(c: Candidate): Promise<void> {
    // abort() waits for a tick in flight; keep its clock moving so a pending sleep can end.
    for (let i = 0; i < 50; i++) {
      await c.clock.advance(1_000);
      await real.sleep(1);
    }
  }
}
