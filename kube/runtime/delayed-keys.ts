/**
 * Keys due at a later time, on one timer for all of them (as client-go's delaying queue: a heap of keys by due time).
 * Thousands of keys may wait at once (e.g. finished objects for their TTL cleanup): with a timer of its own each one
 * cost ~380 bytes (a Timeout, its closure and, as each due time differs, a timer list of its own); here it is one heap
 * entry and one map entry.
 * A key scheduled again keeps the earlier of its two due times.
 */
export class DelayedKeys {
  /** Each key's due time (ms since epoch); a heap entry whose time differs is stale and skipped. */
  private readonly dueAt = new Map<string, number>();
  /** A binary min-heap of due times, with each entry's key at the same index (two flat arrays: no object per entry). */
  private readonly times: number[] = [];
  private readonly keys: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly onDue: (key: string) => void;
  private readonly clock: () => number;

  constructor(onDue: (key: string) => void, clock: () => number = Date.now) {
    this.onDue = onDue;
    this.clock = clock;
  }

  /** `key` is due in `ms`; a pending earlier time for it wins. */
  schedule(key: string, ms: number): void {
    const at = this.clock() + ms;
    const pending = this.dueAt.get(key);
    if (pending !== undefined && pending <= at) return;
    this.dueAt.set(key, at);
    this.push(at, key);
    this.arm();
  }

  get size(): number {
    return this.dueAt.size;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.dueAt.clear();
    this.times.length = 0;
    this.keys.length = 0;
  }

  /** Hands out every key due by now, then sets the timer for the next one. */
  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock();
    while (this.times.length > 0 && this.times[0]! <= now) {
      const at = this.times[0]!;
      const key = this.keys[0]!;
      this.pop();
      if (this.dueAt.get(key) !== at) continue;
      this.dueAt.delete(key);
      this.onDue(key);
    }
    // Stale entries (keys rescheduled earlier) would otherwise wait at the top of the heap.
    while (this.times.length > 0 && this.dueAt.get(this.keys[0]!) !== this.times[0]) this.pop();
    this.arm();
  }

  /** One timer, for the earliest due time (setTimeout's limit is ~24.8 days: later times re-arm on the way). */
  private arm(): void {
    const next = this.times[0];
    if (next === undefined || next >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(() => this.fire(), Math.min(Math.max(0, next - this.clock()), 2 ** 31 - 1));
  }

  private push(at: number, key: string): void {
    const { times, keys } = this;
    let i = times.length;
    times.push(at);
    keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (times[parent]! <= at) break;
      times[i] = times[parent]!;
      keys[i] = keys[parent]!;
      i = parent;
    }
    times[i] = at;
    keys[i] = key;
  }

  /** Removes the earliest entry. */
  private pop(): void {
    const { times, keys } = this;
    const at = times.pop()!;
    const key = keys.pop()!;
    const n = times.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const child = l + 1 < n && times[l + 1]! < times[l]! ? l + 1 : l;
      if (times[child]! >= at) break;
      times[i] = times[child]!;
      keys[i] = keys[child]!;
      i = child;
    }
    times[i] = at;
    keys[i] = key;
  }
}
