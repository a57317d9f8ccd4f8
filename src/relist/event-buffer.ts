// A bounded ring of recent lifecycle events, for /status. When full, the oldest event is
// dropped and counted, so memory stays fixed however much a node churns.

export class EventBuffer<T> {
  readonly capacity: number;
  #items: T[] = [];
  #start = 0;
  #dropped = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity: ${capacity} must be a whole number ≥ 1`);
    this.capacity = capacity;
  }

  push(item: T): void {
    if (this.#items.length < this.capacity) {
      this.#items.push(item);
      return;
    }
    this.#items[this.#start] = item;
    this.#start = (this.#start + 1) % this.capacity;
    this.#dropped++;
  }

  /** Oldest first. */
  toArray(): T[] {
    return [...this.#items.slice(this.#start), ...this.#items.slice(0, this.#start)];
  }

  /** How many events were dropped to keep the bound. */
  get dropped(): number {
    return this.#dropped;
  }
}
