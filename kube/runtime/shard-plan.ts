/**
 * Which shard leases a replica renews, takes and gives up, decided from what it sees: a pure function of the shard
 * count, the live replicas (each keeps a member lease) and each shard's current holder. Each replica holds at most
 * its fair share, ceil(shards / live replicas): a replica alone takes every shard; when another one joins, the first
 * gives up what exceeds its share and the newcomer takes the shards left free; when a replica dies (its leases
 * expire), the survivors' share grows and they take its shards.
 */

export interface ShardView {
  shards: number;
  /** This replica's identity. */
  me: string;
  /** Identities of the live replicas; this one is counted whether listed or not. */
  members: readonly string[];
  /** Per shard, the identity holding it; "" when it is free or its holder let it expire. */
  holders: readonly string[];
}

export interface ShardPlan {
  /** Shards this replica holds and renews. */
  keep: number[];
  /** Free shards it tries to take (in this order). */
  acquire: number[];
  /** Shards it holds beyond its fair share: given up for the others. */
  release: number[];
}

/** The most shards one of `replicas` live replicas holds: ceil(shards / replicas). */
export function fairShare(shards: number, replicas: number): number {
  return Math.ceil(shards / Math.max(1, replicas));
}

export function planShards(view: ShardView): ShardPlan {
  const members = [...new Set([...view.members, view.me])].sort();
  const share = fairShare(view.shards, members.length);
  const indices = Array.from({ length: view.shards }, (_, i) => i);
  const mine = indices.filter((i) => view.holders[i] === view.me);
  const keep = mine.slice(0, share);
  const release = mine.slice(share);
  // Free shards are tried from a different place by each replica (its rank among the members × its share), so
  // replicas starting together reach for different shards instead of racing for the same ones.
  const start = members.indexOf(view.me) * share;
  const free = indices
    .filter((i) => !view.holders[i])
    .sort((a, b) => ((a - start + view.shards) % view.shards) - ((b - start + view.shards) % view.shards));
  return { keep, acquire: free.slice(0, Math.max(0, share - keep.length)), release };
}
