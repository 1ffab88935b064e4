import { describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { EventRecorder } from "./events.ts";

const target = { name: "run-1", namespace: "team", uid: "u-1" };

/** A client whose creates wait until released, recording the Events' reasons. */
function slowApiserver() {
  const posted: string[] = [];
  const pending: (() => void)[] = [];
  return {
    posted,
    releaseAll: () => pending.splice(0).forEach((r) => r()),
    client: {
      create: <T>(_path: string, body: T) => {
        posted.push((body as { reason: string }).reason);
        return new Promise<T>((resolve) => pending.push(() => resolve(body)));
      },
    },
  };
}

describe("EventRecorder", () => {
  it("drops Events beyond its backlog while the apiserver lags, counts them, and posts again once it caught up", async () => {
    const api = slowApiserver();
    let dropped = 0;
    const events = new EventRecorder({
      client: api.client,
      log: silentLogger(),
      instance: "test",
      now: () => new Date(0),
      backlog: 2,
      onDropped: () => dropped++,
    });
    events.record(target, "Normal", "TaskStarted", "one");
    events.record(target, "Normal", "TaskSucceeded", "two");
    events.record(target, "Normal", "ExecutionSucceeded", "three");
    expect(api.posted).toEqual(["TaskStarted", "TaskSucceeded"]);
    expect(dropped).toBe(1);

    api.releaseAll();
    await events.flush();
    // The dropped Event was not remembered as posted: a later reconcile that records it again gets it through.
    events.record(target, "Normal", "ExecutionSucceeded", "three");
    events.record(target, "Normal", "TaskStarted", "one"); // already posted: not again
    expect(api.posted).toEqual(["TaskStarted", "TaskSucceeded", "ExecutionSucceeded"]);
    api.releaseAll();
    await events.flush();
  });

  it("posts at most its budget: a burst, then perSecond; none with perSecond 0", async () => {
    const api = slowApiserver();
    let dropped = 0;
    let clock = 0;
    const events = new EventRecorder({
      client: api.client,
      log: silentLogger(),
      instance: "test",
      now: () => new Date(0),
      perSecond: 2,
      burst: 3,
      clockMs: () => clock,
      onDropped: () => dropped++,
    });
    for (let i = 0; i < 5; i++) events.record(target, "Normal", "TaskStarted", `burst ${i}`);
    expect(api.posted).toHaveLength(3);
    expect(dropped).toBe(2);
    clock += 1000; // two more tokens
    for (let i = 0; i < 3; i++) events.record(target, "Normal", "TaskStarted", `later ${i}`);
    expect(api.posted).toHaveLength(5);
    expect(dropped).toBe(3);
    api.releaseAll();
    await events.flush();

    const none = new EventRecorder({
      client: api.client,
      log: silentLogger(),
      instance: "t",
      now: () => new Date(0),
      perSecond: 0,
    });
    none.record(target, "Normal", "TaskStarted", "off");
    expect(api.posted).toHaveLength(5);
  });
});
