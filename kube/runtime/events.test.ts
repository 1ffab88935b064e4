import { describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { EventRecorder } from "./events.ts";

const target = { name: "widget-1", namespace: "team", uid: "u-1" };
const identity = {
  component: "widget-controller",
  reportingController: "example.com/widget-controller",
  involvedKind: { apiVersion: "example.com/v1", kind: "Widget" },
};

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
      ...identity,
      now: () => new Date(0),
      backlog: 2,
      onDropped: () => dropped++,
    });
    events.record(target, "Normal", "Started", "one");
    events.record(target, "Normal", "Progressed", "two");
    events.record(target, "Normal", "Finished", "three");
    expect(api.posted).toEqual(["Started", "Progressed"]);
    expect(dropped).toBe(1);

    api.releaseAll();
    await events.flush();
    // The dropped Event was not remembered as posted: a later reconcile that records it again gets it through.
    events.record(target, "Normal", "Finished", "three");
    events.record(target, "Normal", "Started", "one"); // already posted: not again
    expect(api.posted).toEqual(["Started", "Progressed", "Finished"]);
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
      ...identity,
      now: () => new Date(0),
      perSecond: 2,
      burst: 3,
      clockMs: () => clock,
      onDropped: () => dropped++,
    });
    for (let i = 0; i < 5; i++) events.record(target, "Normal", "Started", `burst ${i}`);
    expect(api.posted).toHaveLength(3);
    expect(dropped).toBe(2);
    clock += 1000; // two more tokens
    for (let i = 0; i < 3; i++) events.record(target, "Normal", "Started", `later ${i}`);
    expect(api.posted).toHaveLength(5);
    expect(dropped).toBe(3);
    api.releaseAll();
    await events.flush();

    const none = new EventRecorder({
      client: api.client,
      log: silentLogger(),
      instance: "t",
      ...identity,
      now: () => new Date(0),
      perSecond: 0,
    });
    none.record(target, "Normal", "Started", "off");
    expect(api.posted).toHaveLength(5);
  });

  it("names its component and the object's kind: the recorder's, or the target's own", async () => {
    const bodies: { involvedObject: { kind: string; apiVersion: string }; reportingComponent: string }[] = [];
    const events = new EventRecorder({
      client: { create: async <T>(_path: string, body: T) => (bodies.push(body as (typeof bodies)[number]), body) },
      log: silentLogger(),
      instance: "test",
      now: () => new Date(0),
      ...identity,
    });
    events.record(target, "Normal", "Started", "one");
    events.record({ ...target, apiVersion: "example.com/v2", kind: "Gadget" }, "Warning", "Invalid", "two");
    await events.flush();
    expect(bodies.map((b) => [b.involvedObject.apiVersion, b.involvedObject.kind, b.reportingComponent])).toEqual([
      ["example.com/v1", "Widget", "example.com/widget-controller"],
      ["example.com/v2", "Gadget", "example.com/widget-controller"],
    ]);
  });
});
