import { shardOf } from "../core/shard.ts";
import type { KubeObject } from "../kube/client.ts";
import { objectKey, splitKey, type Informer } from "../kube/informer.ts";
import type { Caches } from "./caches.ts";
import type { WorkQueue } from "./work-queue.ts";

/** What the triggers put keys into (queueOnChange). */
export type KeySink = Pick<WorkQueue, "add" | "addUrgent">;

/**
 * Which executions and crews this replica works on when executions are sharded: an execution belongs to shard
 * shardOf(its uid), a crew likewise by its own uid, so each has exactly one owner among the replicas. Everything an
 * execution's reconcile does (Jobs, status, webhook deliveries, TTL cleanup, the apps credential's revocation) is done
 * by its shard's holder only. Keys are filtered as they are queued and again as a worker takes them (a shard may be
 * lost in between); a shard gained puts its executions and crews from the caches into the queues.
 */
export class ShardOwnership {
  private readonly shards: number;
  private readonly caches: Pick<Caches, "executions" | "crews">;
  private readonly queues: { executions: KeySink; crews: KeySink };
  private readonly held = new Set<number>();

  constructor(o: {
    shards: number;
    caches: Pick<Caches, "executions" | "crews">;
    queues: { executions: KeySink; crews: KeySink };
  }) {
    this.shards = o.shards;
    this.caches = o.caches;
    this.queues = o.queues;
  }

  /** The shard of a cached object; undefined when it is not (or no longer) in the cache. */
  private shardOfKey(informer: Informer<KubeObject>, key: string): number | undefined {
    const uid = informer.get(...splitKey(key))?.metadata?.uid;
    return uid === undefined ? undefined : shardOf(uid, this.shards);
  }

  private owns(informer: Informer<KubeObject>, key: string): boolean {
    const shard = this.shardOfKey(informer, key);
    return shard !== undefined && this.held.has(shard);
  }

  ownsExecution = (key: string): boolean => this.owns(this.caches.executions, key);
  ownsCrew = (key: string): boolean => this.owns(this.caches.crews, key);

  /** The queues, passing on only the keys of the shards held now. */
  filtered(): { executions: KeySink; crews: KeySink } {
    const gate = (sink: KeySink, owns: (key: string) => boolean): KeySink => ({
      add: (key) => owns(key) && sink.add(key),
      addUrgent: (key) => owns(key) && sink.addUrgent(key),
    });
    return {
      executions: gate(this.queues.executions, this.ownsExecution),
      crews: gate(this.queues.crews, this.ownsCrew),
    };
  }

  /** A shard was taken: its executions and crews in the caches are queued. */
  gain(shard: number): void {
    this.held.add(shard);
    for (const [informer, sink] of [
      [this.caches.executions, this.queues.executions],
      [this.caches.crews, this.queues.crews],
    ] as const) {
      for (const o of informer.list()) {
        if (o.metadata?.uid && shardOf(o.metadata.uid, this.shards) === shard) sink.add(objectKey(o));
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
}
