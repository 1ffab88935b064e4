import { describe, expect, it } from "vitest";
import { nestsDeeperThan } from "./json-depth.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

describe("nestsDeeperThan", () => {
  it("counts objects and arrays, up to and beyond the limit", () => {
    expect(nestsDeeperThan(bytes(nested(3)), 3)).toBe(false);
    expect(nestsDeeperThan(bytes(nested(4)), 3)).toBe(true);
    expect(nestsDeeperThan(bytes('{"a":{"b":[1,{"c":2}]}}'), 4)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":{"b":[1,{"c":2}]}}'), 3)).toBe(true);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(nestsDeeperThan(bytes(`{"a":"${"[{".repeat(100)}"}`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`{"a":"\\"[[[[","b":1}`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`{"a":"\\\\","b":[[1]]}`), 2)).toBe(true);
  });

  it("measures depth, not the number of containers", () => {
    expect(nestsDeeperThan(bytes(`[${"[],".repeat(10_000)}[]]`), 2)).toBe(false);
  });
});
