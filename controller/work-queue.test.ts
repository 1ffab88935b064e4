import { describe, expect, it } from "vitest";
import { WorkQueue } from "./work-queue.ts";

describe("WorkQueue", () => {
  it("holds a key once however often it is added", async () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("a");
    q.add("b");
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
  });

  it("never hands a key being processed to a second worker, and hands it out again when the first is done", async () => {
    const q = new WorkQueue();
    q.add("a");
    const first = await q.get();
    q.add("a");
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await new Promise((r) => setTimeout(r, 10));
    expect(second).toBeUndefined();
    q.done(first!);
    await new Promise((r) => setTimeout(r, 0));
    expect(second).toBe("a");
  });

  it("backs off a failing key exponentially and starts over after forget", () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 350 });
    expect([q.addRateLimited("a"), q.addRateLimited("a"), q.addRateLimited("a"), q.addRateLimited("a")]).toEqual([
      100, 200, 350, 350,
    ]);
    q.forget("a");
    expect(q.addRateLimited("a")).toBe(100);
    q.shutDown();
  });

  it("adds a key after a delay, the earliest schedule winning", async () => {
    const q = new WorkQueue();
    q.addAfter("a", 1000);
    q.addAfter("a", 20);
    expect(q.depth).toBe(0);
    await new Promise((r) => setTimeout(r, 40));
    expect(q.depth).toBe(1);
    q.shutDown();
  });

  it("wakes waiting workers with undefined on shutdown", async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
  });
});
