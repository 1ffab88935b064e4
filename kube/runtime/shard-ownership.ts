import type { KubeObject } from "./client.ts";
import { objectKey, splitKey, type Informer } from "./informer.ts";
import { shardOf } from "./shard.ts";
import type { WorkQueue } from "./work-queue.ts";

/** What change handlers put keys into. */
export type KeySink = Pick<WorkQueue, "add" | "addUrgent">;

/** One kind of object a sharded controller works on: where it is cached, and the queue its keys go to. */
export interface ShardedKind {
  cache: Pick<Informer<KubeObject>, "get" | "list">;
  queue: KeySink;
}

/**
 * Which objects this replica works on when the work is sharded: an object belongs to shard shardOf(its uid), so each
 * has exactly one owner among the replicas, and everything its reconcile does is done by its shard's holder only.
 * Keys are filtered as they are queued and again as a worker takes them (a shard may be lost in between); a shard
 * gained puts its objects of every kind from the caches into their queues.
 */
export class ShardOwnership<Kind extends string> {
  private readonly shards: number;
  private readonly kinds: Record<Kind, ShardedKind>;
  private readonly held = new Set<number>();

  constructor(o: { shards: number; kinds: Record<Kind, ShardedKind> }) {
    this.shards = o.shards;
    this.kinds = o.kinds;
  }

  /** Whether this replica holds the shard of the cached object under `key` (false when it is not in the cache). */
  owns(kind: Kind, key: string): boolean {
    const uid = this.kinds[kind].cache.get(...splitKey(key))?.metadata?.uid;
    return uid !== undefined && this.held.has(shardOf(uid, this.shards));
  }

  /** owns() for one kind, as a function of the key (for workers and their queues). */
  ownerOf(kind: Kind): (key: string) => boolean {
    return (key) => this.owns(kind, key);
  }

  /** The queues, passing on only the keys of the shards held now. */
  filtered(): Record<Kind, KeySink> {
    const gated = {} as Record<Kind, KeySink>;
    for (const kind of this.kindNames()) {
      const sink = this.kinds[kind].queue;
      const owns = this.ownerOf(kind);
      gated[kind] = {
        add: (key) => owns(key) && sink.add(key),
        addUrgent: (key) => owns(key) && sink.addUrgent(key),
      };
    }
    return gated;
  }

  /** A shard was taken: its objects in the caches are queued. */
  gain(shard: number): void {
    this.held.add(shard);
    for (const kind of this.kindNames()) {
      const { cache, queue } = this.kinds[kind];
      for (const o of cache.list()) {
        if (o.metadata?.uid && shardOf(o.metadata.uid, this.shards) === shard) queue.add(objectKey(o));
      }
    }
  }

  /** A shard was lost or given up: nothing new is started for it (a reconcile already running may finish). */
  lose(shard: number): void {
    this.held.delete(shard);
  }

  /** The shards held now, ascending. */
  get heldShards(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  private kindNames(): Kind[] {
    return Object.keys(this.kinds) as Kind[];
  }
}
