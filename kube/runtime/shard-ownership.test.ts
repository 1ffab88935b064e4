import { describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { shardOf } from "./shard.ts";
import type { KubeObject } from "./client.ts";
import { Informer } from "./informer.ts";
import { resourcePath, type ResourceType } from "./resources.ts";
import { RecordingKube } from "../../test/support/recording-kube.ts";
import { ShardOwnership } from "./shard-ownership.ts";
import { runWorker } from "./worker.ts";
import { WorkQueue } from "./work-queue.ts";

const NS = "team";
const kube = new RecordingKube();
const object = (name: string, uid: string): KubeObject => ({ metadata: { name, namespace: NS, uid } });
/** Two kinds of objects, as a controller shards its work. */
const WIDGETS: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  apiVersion: "example.com/v1",
};
const GADGETS: ResourceType = {
  group: "example.com",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  apiVersion: "example.com/v1",
};

/** Uids that land in shard 0 and shard 1 of 2. */
function uidIn(shard: number, seed: string): string {
  for (let i = 0; ; i++) if (shardOf(`${seed}-${i}`, 2) === shard) return `${seed}-${i}`;
}

function setup() {
  const log = silentLogger();
  const caches = {
    widgets: new Informer<KubeObject>({ client: kube, log, path: resourcePath(WIDGETS, NS) }),
    gadgets: new Informer<KubeObject>({ client: kube, log, path: resourcePath(GADGETS, NS) }),
  };
  caches.widgets.upsert(object("e0", uidIn(0, "e0")));
  caches.widgets.upsert(object("e1", uidIn(1, "e1")));
  caches.gadgets.upsert(object("c1", uidIn(1, "c1")));
  const queues = { widgets: new WorkQueue(), gadgets: new WorkQueue() };
  const ownership = new ShardOwnership({
    shards: 2,
    kinds: {
      widgets: { cache: caches.widgets, queue: queues.widgets },
      gadgets: { cache: caches.gadgets, queue: queues.gadgets },
    },
  });
  return { caches, queues, ownership };
}

describe("ShardOwnership", () => {
  it("queues only the keys of held shards, and a gained shard's objects of each kind from the caches", async () => {
    const { queues, ownership } = setup();
    const gated = ownership.filtered();
    ownership.gain(0);
    expect(queues.widgets.depth).toBe(1); // e0, from the cache
    gated.widgets.add(`${NS}/e1`);
    gated.widgets.addUrgent(`${NS}/e1`);
    gated.widgets.add(`${NS}/gone`);
    gated.gadgets.add(`${NS}/c1`);
    expect([queues.widgets.depth, queues.gadgets.depth]).toEqual([1, 0]);
    expect(await queues.widgets.get()).toBe(`${NS}/e0`);
    queues.widgets.done(`${NS}/e0`);

    ownership.gain(1);
    expect([queues.widgets.depth, queues.gadgets.depth]).toEqual([1, 1]);
    expect(await queues.widgets.get()).toBe(`${NS}/e1`);
    expect(await queues.gadgets.get()).toBe(`${NS}/c1`);
    expect(ownership.heldShards).toEqual([0, 1]);
  });

  it("a worker skips a key whose shard was lost after it was queued, and reconciles the others", async () => {
    const { queues, ownership } = setup();
    ownership.gain(0);
    ownership.gain(1);
    ownership.lose(1);
    const reconciled: string[] = [];
    const worker = runWorker({
      queue: queues.widgets,
      log: silentLogger(),
      kind: "widget",
      owns: ownership.ownerOf("widgets"),
      reconciler: { reconcile: async (key) => (reconciled.push(key), {}) },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    queues.widgets.shutDown();
    await worker;
    expect(reconciled).toEqual([`${NS}/e0`]);
  });
});
