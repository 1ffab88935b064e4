import { describe, expect, it } from "vitest";
import { sameJson } from "./json.ts";

describe("sameJson", () => {
  it("compares as JSON: keys in any order, undefined members absent, arrays in order", () => {
    expect(sameJson({ a: 1, b: { c: [1, "x", null] } }, { b: { c: [1, "x", null] }, a: 1 })).toBe(true);
    expect(sameJson({ a: 1, gone: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, gone: undefined })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
    expect(sameJson({ a: "1" }, { a: 1 })).toBe(false);
    expect(sameJson({ a: null }, { a: undefined })).toBe(false);
    expect(sameJson(undefined, undefined)).toBe(true);
    expect(sameJson({}, undefined)).toBe(false);
  });
});
