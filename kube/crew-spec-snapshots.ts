/**
 * Every run of a crew version carries the same snapshot of the crew in its status (`crewSpec`): a cache keeps one
 * copy per distinct snapshot instead of one per execution (the API's and the controller's informer transforms).
 * Bounded: past `max` distinct snapshots it starts again. The shared copies must not be changed by their readers.
 */
export class CrewSpecSnapshots {
  private readonly byText = new Map<string, unknown>();
  private readonly max: number;

  constructor(max = 512) {
    this.max = max;
  }

  shared(snapshot: unknown): unknown {
    const text = JSON.stringify(snapshot);
    const known = this.byText.get(text);
    if (known !== undefined) return known;
    if (this.byText.size >= this.max) this.byText.clear();
    this.byText.set(text, snapshot);
    return snapshot;
  }
}
