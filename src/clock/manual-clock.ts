// A clock that moves only when a test moves it. Timers fire in due order during advance(),
// and the microtask queue is drained between them so that async loops woken by one timer can
// schedule the next before time moves on.
import { sleepOn, type Clock, type Timer } from './clock.ts';

interface Pending {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  #now: number;
  #wallEpochMicros: number;
  /** Shifts wall time only, as a stepped system clock would. */
  wallOffsetMs = 0;
  #timers: Pending[] = [];
  #seq = 0;

  /** @param startWallMs the wall time at monotonic 0, by default 2026-01-02T03:04:05Z. */
  constructor(options: { startMonotonicMs?: number; startWallMs?: number } = {}) {
    this.#now = options.startMonotonicMs ?? 0;
    this.#wallEpochMicros = (options.startWallMs ?? Date.UTC(2026, 0, 2, 3, 4, 5)) * 1000 - this.#now * 1000;
  }

  monotonicMs(): number {
    return this.#now;
  }

  wallMicros(): number {
    return Math.floor(this.#wallEpochMicros + this.#now * 1000 + this.wallOffsetMs * 1000);
  }

  after(ms: number, fn: () => void): Timer {
    const pending: Pending = { due: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(pending);
    return { cancel: () => { pending.cancelled = true; } };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by ms, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushMicrotasks();
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      this.#timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
      const next = this.#timers[0];
      if (next === undefined || next.due > target) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.due);
      next.fn();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /** Moves time forward without firing timers: models a blocked event loop or a starved process. */
  jump(ms: number): void {
    this.#now += ms;
  }
}

/** Lets every pending promise continuation run (several turns, for chains of awaits). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
