import { describe, expect, it } from "vitest";
import { inputBytes, truncateForModel } from "./tool-limits.ts";

describe("truncateForModel", () => {
  it("keeps text within the bound as it is", () => {
    expect(truncateForModel("short", 10)).toBe("short");
    expect(truncateForModel("x".repeat(10), 10)).toBe("x".repeat(10));
  });

  it("cuts longer text and says how much there was", () => {
    expect(truncateForModel("abcdefghijkl", 5)).toBe("abcde\n[truncated: showing the first 5 of 12 characters]");
  });
});

describe("inputBytes", () => {
  it("measures the JSON of an input in UTF-8 bytes", () => {
    expect(inputBytes({ a: "é" })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(inputBytes(undefined)).toBe(4);
  });
});
