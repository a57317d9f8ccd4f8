// One term of leadership, as the leader tasks see it: a number, an AbortSignal that fires when
// belief ends, and the fence every write of theirs goes through.
//
// JavaScript cannot stop a promise that ignores its signal, so the signal alone cannot keep two
// terms apart: a task that carries on after its term ends would still write. The fence closes
// that gap. fenced() asks the elector, on the caller's clock, whether THIS term is still
// believed, immediately before the write is sent, and refuses with a FencedError (code
// `not_leader`) otherwise. The write also gets a signal that aborts when the term ends, so a
// request still in flight is cancelled (though one already received by the server cannot be
// recalled: the renew deadline, shorter than the lease duration others wait, covers that).

export class FencedError extends Error {
  readonly code = 'not_leader';

  constructor(message: string) {
    super(message);
    this.name = 'FencedError';
  }
}

export interface TermOwner {
  /** Whether term number n is the current one and still believed, on the owner's clock now. */
  believes(n: number): boolean;
  readonly identity: string;
}

export class Term {
  readonly number: number;
  readonly signal: AbortSignal;
  readonly #owner: TermOwner;
  #refused = 0;

  constructor(owner: TermOwner, number: number, signal: AbortSignal) {
    this.#owner = owner;
    this.number = number;
    this.signal = signal;
  }

  /** Whether this term is still believed, checked on the elector's clock now. */
  isCurrent(): boolean {
    return !this.signal.aborted && this.#owner.believes(this.number);
  }

  /** Writes refused since the term ended. */
  get refused(): number {
    return this.#refused;
  }

  /**
   * Sends one write of a leader task, or refuses it once the term has ended. `what` names the
   * write for the error ("PATCH nodes/status node-1").
   */
  async fenced<T>(what: string, write: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (!this.isCurrent()) {
      this.#refused++;
      throw new FencedError(`${what}: refused: term ${this.number} of ${this.#owner.identity} has ended`);
    }
    return write(this.signal);
  }
}
