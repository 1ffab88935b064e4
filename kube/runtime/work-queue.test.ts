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

  it("hands out urgent keys (work in progress) before new work queued earlier, each key once", async () => {
    const q = new WorkQueue();
    q.add("new-1");
    q.add("new-2");
    q.add("running");
    q.addUrgent("child-changed");
    q.addUrgent("running"); // waiting in the other lane: moves up, and is not handed out twice
    expect(q.depth).toBe(4);
    const order = [];
    for (let i = 0; i < 4; i++) order.push(await q.get());
    expect(order).toEqual(["child-changed", "running", "new-1", "new-2"]);
    expect(q.depth).toBe(0);
    let fifth: string | undefined;
    void q.get().then((k) => (fifth = k));
    await new Promise((r) => setTimeout(r, 10));
    expect(fifth).toBeUndefined();
  });

  it("keeps a worker that takes only urgent keys free of new work, for work in progress", async () => {
    const q = new WorkQueue();
    q.add("new-1");
    q.add("new-2");
    // The urgent-only worker leaves the waiting new work alone and waits.
    let kept: string | undefined;
    const keptWorker = q.get({ urgentOnly: true }).then((k) => (kept = k));
    expect(await q.get()).toBe("new-1"); // the other worker, busy with it from now on
    await new Promise((r) => setTimeout(r, 10));
    expect(kept).toBeUndefined();
    // A child changed: the kept worker takes it at once, though new work is still waiting.
    q.addUrgent("child-changed");
    await keptWorker;
    expect(kept).toBe("child-changed");
    expect(q.depth).toBe(1);
    // New work never goes to a waiting urgent-only worker; an ordinary one takes it.
    const kept2 = q.get({ urgentOnly: true });
    const ordinary = q.get();
    expect(await ordinary).toBe("new-2");
    q.add("new-3");
    q.addUrgent("another-child");
    expect(await kept2).toBe("another-child");
    expect(await q.get()).toBe("new-3");
  });

  it("puts a key added urgently while it is processed in the urgent lane when it is done", async () => {
    const q = new WorkQueue();
    q.add("a");
    const a = await q.get();
    q.addUrgent("a");
    q.add("b");
    q.done(a!);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
  });

  it("reports how long each key waited, by the lane a worker took it from", async () => {
    const waits: [string, number][] = [];
    const q = new WorkQueue({ onWait: (lane, ms) => waits.push([lane, ms]) });
    const idle = q.get();
    q.addUrgent("a"); // a worker was waiting: no wait at all
    expect(await idle).toBe("a");
    q.add("b");
    q.add("c");
    q.addUrgent("c");
    await new Promise((r) => setTimeout(r, 30));
    expect(await q.get()).toBe("c");
    expect(await q.get()).toBe("b");
    expect(waits.map(([lane]) => lane)).toEqual(["urgent", "urgent", "normal"]);
    expect(waits[0]![1]).toBe(0);
    expect(waits[1]![1]).toBeGreaterThanOrEqual(25);
    expect(waits[2]![1]).toBeGreaterThanOrEqual(25);
  });
});
