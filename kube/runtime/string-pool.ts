/**
 * One copy of each recurring string a cache keeps (as Go's unique.Make, or Java's String.intern). Every object of a
 * watch event or a list page is parsed on its own, so each carries its own copy of the namespace, its timestamps, the
 * label values and condition reasons it shares with thousands of others, and the cache keys (`<namespace>/<name>`)
 * are built anew for each index. Through a pool they are one string each.
 *
 * Bounded: it remembers the strings of its last two generations of `generationSize` (a string met again moves to the
 * newer one), so strings met once (a uid, a name gone from the cache) leave it, and recurring ones stay.
 */
export class StringPool {
  private newer = new Map<string, string>();
  private older = new Map<string, string>();
  private readonly generationSize: number;

  constructor(generationSize = 4096) {
    this.generationSize = generationSize;
  }

  /** The pool's copy of `s` (`s` itself, the first time). */
  readonly intern = (s: string): string => {
    const known = this.newer.get(s);
    if (known !== undefined) return known;
    const kept = this.older.get(s) ?? s;
    if (this.newer.size >= this.generationSize) {
      this.older = this.newer;
      this.newer = new Map();
    }
    this.newer.set(kept, kept);
    return kept;
  };

  /** `s` from the pool, or undefined as it was. */
  readonly maybe = (s: string | undefined): string | undefined => (s === undefined ? undefined : this.intern(s));
}
