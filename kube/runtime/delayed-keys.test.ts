import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DelayedKeys } from "./delayed-keys.ts";

describe("DelayedKeys", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("hands out each key when it is due, in the order of due times, whatever the order scheduled", () => {
    const due: string[] = [];
    const keys = new DelayedKeys((k) => due.push(k));
    const delays = [500, 20, 3000, 25, 1, 86_400_000, 750, 40];
    delays.forEach((ms, i) => keys.schedule(`k${i}`, ms));
    vi.advanceTimersByTime(25);
    expect(due).toEqual(["k4", "k1", "k3"]);
    vi.advanceTimersByTime(3000);
    expect(due).toEqual(["k4", "k1", "k3", "k7", "k0", "k6", "k2"]);
    expect(keys.size).toBe(1);
    vi.advanceTimersByTime(86_400_000);
    expect(due.at(-1)).toBe("k5");
    expect(keys.size).toBe(0);
  });

  it("keeps the earlier time of a key scheduled twice, and hands it out once", () => {
    const due: string[] = [];
    const keys = new DelayedKeys((k) => due.push(k));
    keys.schedule("a", 1000);
    keys.schedule("a", 10);
    keys.schedule("a", 5000);
    vi.advanceTimersByTime(10);
    expect(due).toEqual(["a"]);
    vi.advanceTimersByTime(10_000);
    expect(due).toEqual(["a"]);
  });

  it("schedules a key again after it was handed out", () => {
    const due: string[] = [];
    const keys = new DelayedKeys((k) => due.push(k));
    keys.schedule("a", 100);
    keys.schedule("b", 300);
    vi.advanceTimersByTime(100);
    keys.schedule("a", 500);
    vi.advanceTimersByTime(200);
    expect(due).toEqual(["a", "b"]);
    vi.advanceTimersByTime(300);
    expect(due).toEqual(["a", "b", "a"]);
  });

  it("uses one timer for any number of keys, and none once cleared", () => {
    const keys = new DelayedKeys(() => undefined);
    for (let i = 0; i < 10_000; i++) keys.schedule(`k${i}`, 60_000 + i);
    expect(vi.getTimerCount()).toBe(1);
    keys.clear();
    expect(vi.getTimerCount()).toBe(0);
    expect(keys.size).toBe(0);
  });

  it("waits beyond setTimeout's limit of ~24.8 days", () => {
    const due: string[] = [];
    const keys = new DelayedKeys((k) => due.push(k));
    keys.schedule("far", 40 * 86_400_000);
    vi.advanceTimersByTime(30 * 86_400_000);
    expect(due).toEqual([]);
    vi.advanceTimersByTime(10 * 86_400_000);
    expect(due).toEqual(["far"]);
  });
});
