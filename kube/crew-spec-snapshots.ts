import { decodeCrewSpec, type DecodedCrewSpec } from "../core/crew-status.ts";

/**
 * Every run of a crew version carries the same snapshot of the crew in its status (`crewSpec`): a cache decodes each
 * distinct snapshot once and keeps one decoded copy, shared by every execution that carries it (the API's and the
 * controller's caches), instead of one per execution. Bounded: past `max` distinct snapshots it starts again. The
 * shared copies must not be changed by their readers.
 */
export class CrewSpecSnapshots {
  private readonly byText = new Map<string, DecodedCrewSpec>();
  private readonly max: number;

  constructor(max = 512) {
    this.max = max;
  }

  decode(snapshot: unknown): DecodedCrewSpec {
    const text = JSON.stringify(snapshot);
    const known = this.byText.get(text);
    if (known !== undefined) return known;
    if (this.byText.size >= this.max) this.byText.clear();
    const decoded = decodeCrewSpec(snapshot);
    this.byText.set(text, decoded);
    return decoded;
  }
}
