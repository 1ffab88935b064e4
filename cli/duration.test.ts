import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.ts";

describe("parseDuration", () => {
  it("reads seconds, minutes, hours, days and weeks", () => {
    expect(parseDuration("3600")).toBe(3600);
    expect(parseDuration("45s")).toBe(45);
    expect(parseDuration("90m")).toBe(5400);
    expect(parseDuration("12h")).toBe(43_200);
    expect(parseDuration("30d")).toBe(2_592_000);
    expect(parseDuration("2w")).toBe(1_209_600);
  });

  it("rejects anything else", () => {
    for (const text of ["", "0", "0d", "-1", "1.5h", "5y", "d", "10 days", "99999999999999999999d"]) {
      expect(parseDuration(text), text).toBeUndefined();
    }
  });
});
