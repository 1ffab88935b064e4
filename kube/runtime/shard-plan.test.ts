import { describe, expect, it } from "vitest";
import { fairShare, planShards, type ShardView } from "./shard-plan.ts";

/** Runs every replica's plan in turn against one shared table of holders until nothing changes: a small cluster. */
function settle(shards: number, members: string[], holders: string[] = Array<string>(shards).fill("")): string[] {
  for (let round = 0; round < 10; round++) {
    const before = holders.join(",");
    for (const me of members) {
      const plan = planShards({ shards, me, members, holders });
      for (const i of plan.release) holders[i] = "";
      for (const i of plan.acquire) if (!holders[i]) holders[i] = me;
    }
    if (holders.join(",") === before) return holders;
  }
  throw new Error(`no steady state: ${holders.join(",")}`);
}

const count = (holders: string[], me: string) => holders.filter((h) => h === me).length;

describe("fairShare", () => {
  it("is ceil(shards / replicas), all shards for one replica (or none counted)", () => {
    expect(fairShare(3, 1)).toBe(3);
    expect(fairShare(3, 2)).toBe(2);
    expect(fairShare(2, 2)).toBe(1);
    expect(fairShare(2, 3)).toBe(1);
    expect(fairShare(4, 0)).toBe(4);
  });
});

describe("planShards", () => {
  it("a replica alone takes every free shard", () => {
    expect(planShards({ shards: 3, me: "a", members: [], holders: ["", "", ""] })).toEqual({
      keep: [],
      acquire: [0, 1, 2],
      release: [],
    });
  });

  it("renews what it holds within its share and never takes a shard another live replica holds", () => {
    const view: ShardView = { shards: 3, me: "b", members: ["a", "b"], holders: ["a", "b", "a"] };
    expect(planShards(view)).toEqual({ keep: [1], acquire: [], release: [] });
  });

  it("gives up what exceeds its share when a replica joins; the newcomer takes it", () => {
    const holders = ["a", "a"];
    expect(planShards({ shards: 2, me: "a", members: ["a", "b"], holders })).toEqual({
      keep: [0],
      acquire: [],
      release: [1],
    });
    expect(settle(2, ["a", "b"], holders)).toEqual(["a", "b"]);
  });

  it("spreads N shards over R replicas, each holding at most ceil(N/R), every shard held", () => {
    for (const [shards, replicas] of [
      [2, 2],
      [3, 2],
      [3, 3],
      [2, 3],
      [5, 2],
      [8, 3],
    ] as const) {
      const members = ["r0", "r1", "r2"].slice(0, replicas);
      const holders = settle(shards, members);
      expect(holders.every(Boolean), `${shards}/${replicas}: ${holders.join(",")}`).toBe(true);
      for (const m of members) expect(count(holders, m)).toBeLessThanOrEqual(fairShare(shards, replicas));
    }
  });

  it("replicas starting together reach for different free shards first", () => {
    const a = planShards({ shards: 2, me: "a", members: ["a", "b"], holders: ["", ""] });
    const b = planShards({ shards: 2, me: "b", members: ["a", "b"], holders: ["", ""] });
    expect(a.acquire).toEqual([0]);
    expect(b.acquire).toEqual([1]);
  });

  it("a survivor takes a dead replica's shards once they expire (its holder shows as free)", () => {
    // b died: its member lease and shard lease expired, so b is no longer a member and shard 1 shows free.
    expect(planShards({ shards: 2, me: "a", members: ["a"], holders: ["a", ""] })).toEqual({
      keep: [0],
      acquire: [1],
      release: [],
    });
    expect(settle(3, ["a", "c"], ["a", "", "c"])).toEqual(["a", "a", "c"]);
  });
});
