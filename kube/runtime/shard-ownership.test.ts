import { describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { shardOf } from "../core/shard.ts";
import type { KubeObject } from "../kube/client.ts";
import { Informer } from "../kube/informer.ts";
import { CREW_EXECUTIONS, CREWS, resourcePath } from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { ShardOwnership } from "./shard-ownership.ts";
import { runWorker } from "./worker.ts";
import { WorkQueue } from "./work-queue.ts";

const NS = "team";
const kube = new RecordingKube();
const object = (name: string, uid: string): KubeObject => ({ metadata: { name, namespace: NS, uid } });

/** Executions and crews whose uids land in shard 0 and shard 1 of 2. */
function uidIn(shard: number, seed: string): string {
  for (let i = 0; ; i++) if (shardOf(`${seed}-${i}`, 2) === shard) return `${seed}-${i}`;
}

function setup() {
  const log = silentLogger();
  const caches = {
    executions: new Informer<KubeObject>({ client: kube, log, path: resourcePath(CREW_EXECUTIONS, NS) }),
    crews: new Informer<KubeObject>({ client: kube, log, path: resourcePath(CREWS, NS) }),
  };
  caches.executions.upsert(object("e0", uidIn(0, "e0")));
  caches.executions.upsert(object("e1", uidIn(1, "e1")));
  caches.crews.upsert(object("c1", uidIn(1, "c1")));
  const queues = { executions: new WorkQueue(), crews: new WorkQueue() };
  const ownership = new ShardOwnership({ shards: 2, caches, queues });
  return { caches, queues, ownership };
}

describe("ShardOwnership", () => {
  it("queues only the keys of held shards, and a gained shard's executions and crews from the caches", async () => {
    const { queues, ownership } = setup();
    const gated = ownership.filtered();
    ownership.gain(0);
    expect(queues.executions.depth).toBe(1); // e0, from the cache
    gated.executions.add(`${NS}/e1`);
    gated.executions.addUrgent(`${NS}/e1`);
    gated.executions.add(`${NS}/gone`);
    gated.crews.add(`${NS}/c1`);
    expect([queues.executions.depth, queues.crews.depth]).toEqual([1, 0]);
    expect(await queues.executions.get()).toBe(`${NS}/e0`);
    queues.executions.done(`${NS}/e0`);

    ownership.gain(1);
    expect([queues.executions.depth, queues.crews.depth]).toEqual([1, 1]);
    expect(await queues.executions.get()).toBe(`${NS}/e1`);
    expect(await queues.crews.get()).toBe(`${NS}/c1`);
    expect(ownership.heldShards).toEqual([0, 1]);
  });

  it("a worker skips a key whose shard was lost after it was queued, and reconciles the others", async () => {
    const { queues, ownership } = setup();
    ownership.gain(0);
    ownership.gain(1);
    ownership.lose(1);
    const reconciled: string[] = [];
    const worker = runWorker({
      queue: queues.executions,
      log: silentLogger(),
      kind: "execution",
      owns: ownership.ownsExecution,
      reconciler: { reconcile: async (key) => (reconciled.push(key), {}) },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    queues.executions.shutDown();
    await worker;
    expect(reconciled).toEqual([`${NS}/e0`]);
  });
});
