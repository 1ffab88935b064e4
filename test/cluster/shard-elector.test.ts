import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { KubeClient } from "../../kube/runtime/client.ts";
import { LEASE_GROUP_LABEL, LEASES, resourcePath } from "../../kube/resources.ts";
import type { Lease } from "../../kube/runtime/lease.ts";
import { memberLeaseName, ShardElector, shardLeaseName } from "../../kube/runtime/shard-elector.ts";
import { eventually, useNamespace } from "../support/cluster.ts";

/**
 * The shard elector's Lease writes against the real apiserver: replicas spread the shards, a replica cut off from the
 * apiserver stops working on its shards before another takes them, and one that shuts down hands them over at once.
 */
const ns = useNamespace("shard-elector");
const ID = "kubecrew-controller";
const SHARDS = 3;
const LEASE_SECONDS = 2;
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of stops) await stop();
});

interface Replica {
  identity: string;
  elector: ShardElector;
  /** Calls to the apiserver fail while true (a replica cut off from it; its Leases are not released). */
  cut: boolean;
  gained: [number, number][];
  lost: [number, number][];
}

function replica(identity: string): Replica {
  const client = new KubeClient(ns.kc);
  const r: Replica = { identity, cut: false, gained: [], lost: [], elector: undefined as unknown as ShardElector };
  const guarded = new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (r.cut) return Promise.reject(new Error("connection refused (cut off)"));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  r.elector = new ShardElector({
    client: guarded,
    namespace: ns.name,
    name: ID,
    groupLabel: LEASE_GROUP_LABEL,
    identity,
    shards: SHARDS,
    leaseDurationSeconds: LEASE_SECONDS,
    renewDeadlineSeconds: 1.5,
    retryPeriodSeconds: 0.25,
    log: silentLogger(),
    onGained: (shard) => r.gained.push([shard, Date.now()]),
    onLost: (shard) => r.lost.push([shard, Date.now()]),
  });
  r.elector.start();
  stops.push(async () => {
    r.cut = false;
    await r.elector.stop();
    client.close();
  });
  return r;
}

/** Waits until the assertion holds. */
const until = (assertion: () => void, timeoutMs: number) =>
  eventually(
    () => {
      assertion();
      return true;
    },
    { timeoutMs, intervalMs: 50 },
  );

async function holders(): Promise<string[]> {
  const client = new KubeClient(ns.kc);
  try {
    const list = await client.list<Lease>(resourcePath(LEASES, ns.name), {
      labelSelector: `${LEASE_GROUP_LABEL}=${ID}`,
    });
    const byName = new Map(list.items.map((l) => [l.metadata.name, l.spec.holderIdentity ?? ""]));
    return Array.from({ length: SHARDS }, (_, i) => byName.get(shardLeaseName(ID, i)) ?? "");
  } finally {
    client.close();
  }
}

describe("ShardElector on the real apiserver", () => {
  it("spreads shards over the replicas, takes over a cut-off replica's shard only after it stopped, hands over on shutdown", async () => {
    const a = replica("replica-a");
    await until(() => expect(a.elector.held).toEqual([0, 1, 2]), 10_000);
    expect(await holders()).toEqual(["replica-a", "replica-a", "replica-a"]);

    // A second replica: a keeps its fair share, ceil(3/2) = 2, and gives one up; b takes it.
    const b = replica("replica-b");
    await until(() => expect(b.elector.held).toHaveLength(1), 10_000);
    expect(a.elector.held).toHaveLength(2);
    const bShard = b.elector.held[0]!;
    expect(a.elector.held).not.toContain(bShard);
    expect((await holders())[bShard]).toBe("replica-b");

    // b is cut off from the apiserver: it stops working on its shard after the renew deadline; a takes the shard
    // once the Lease has not changed for a lease duration on a's clock — never while b still works on it.
    const cutAt = Date.now();
    b.cut = true;
    await until(() => expect(a.elector.held).toEqual([0, 1, 2]), 15_000);
    const [, lostAt] = b.lost.find(([s]) => s === bShard)!;
    const [, takenAt] = a.gained.findLast(([s]) => s === bShard)!;
    expect(b.elector.held).toEqual([]);
    expect(lostAt).toBeLessThan(takenAt);
    expect(takenAt - cutAt).toBeGreaterThan(LEASE_SECONDS * 1000 - 500); // expired, not taken early
    expect(await holders()).toEqual(["replica-a", "replica-a", "replica-a"]);

    // b comes back (as a new replica would): the shards spread again; then a shuts down and b holds all at once.
    b.cut = false;
    await until(() => expect(b.elector.held).toHaveLength(1), 10_000);
    const stoppedAt = Date.now();
    await a.elector.stop();
    await until(() => expect(b.elector.held).toEqual([0, 1, 2]), 10_000);
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE_SECONDS * 1000); // released, not expired
    expect(await holders()).toEqual(["replica-b", "replica-b", "replica-b"]);
    const members = await new KubeClient(ns.kc).list<Lease>(resourcePath(LEASES, ns.name), {
      labelSelector: `${LEASE_GROUP_LABEL}=${ID}`,
    });
    expect(members.items.map((l) => l.metadata.name)).not.toContain(memberLeaseName(ID, "replica-a"));
  });
});
