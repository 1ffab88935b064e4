import { describe, expect, it } from "vitest";
import { cleanupDueInMs } from "./cleanup.ts";
import type { ExecutionStatus } from "./execution.ts";

const now = new Date("2026-03-01T10:01:00.000Z");
const finished: ExecutionStatus = { phase: "Succeeded", completionTime: "2026-03-01T10:00:00.000Z" };

describe("cleanupDueInMs", () => {
  it("waits out the TTL from the completion time, then is due at once", () => {
    expect(cleanupDueInMs({ status: finished, ttlSeconds: 90, childrenLeft: true, now })).toBe(30_000);
    expect(cleanupDueInMs({ status: finished, ttlSeconds: 60, childrenLeft: true, now })).toBe(0);
    expect(cleanupDueInMs({ status: finished, ttlSeconds: 0, childrenLeft: true, now })).toBe(0);
  });

  it("is never due for a running execution, a negative TTL or an execution with nothing left", () => {
    expect(cleanupDueInMs({ status: { phase: "Running" }, ttlSeconds: 0, childrenLeft: true, now })).toBeUndefined();
    expect(cleanupDueInMs({ status: undefined, ttlSeconds: 0, childrenLeft: true, now })).toBeUndefined();
    expect(cleanupDueInMs({ status: finished, ttlSeconds: -1, childrenLeft: true, now })).toBeUndefined();
    expect(cleanupDueInMs({ status: finished, ttlSeconds: 0, childrenLeft: false, now })).toBeUndefined();
  });

  it("counts from now when the completion time is missing", () => {
    const failed: ExecutionStatus = { phase: "Failed" };
    expect(cleanupDueInMs({ status: failed, ttlSeconds: 5, childrenLeft: true, now })).toBe(5000);
  });
});
