import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fnv1a32, shardOf } from "./shard.ts";

describe("shardOf", () => {
  it("is FNV-1a 32 bit (the published test vectors)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });

  it("puts a uid in the same shard every time, and everything in shard 0 with one shard", () => {
    const uid = "0b6f3c1e-7d4a-4a8e-9c2b-5e1f0a3d7c99";
    expect(shardOf(uid, 3)).toBe(fnv1a32(uid) % 3);
    expect(shardOf(uid, 3)).toBe(shardOf(uid, 3));
    expect(shardOf(uid, 1)).toBe(0);
  });

  it("spreads uids evenly: each of 3 shards gets about a third of 3,000", () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[shardOf(randomUUID(), 3)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(850);
  });

  it("refuses a shard count that is not a positive integer", () => {
    expect(() => shardOf("x", 0)).toThrow(RangeError);
    expect(() => shardOf("x", 1.5)).toThrow(RangeError);
  });
});
