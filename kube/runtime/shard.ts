/**
 * Which shard an object belongs to when a controller's work is sharded across replicas: FNV-1a (32 bit) of its uid,
 * modulo the shard count. Stable across processes, versions and restarts (no seed, no runtime hash), so every replica
 * agrees on the owner of an object without talking to the others.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a, 32 bit, over the string's UTF-8 bytes; an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The shard (0 … shards − 1) of the object with this uid. */
export function shardOf(uid: string, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1)
    throw new RangeError(`shard count must be a positive integer: ${shards}`);
  return fnv1a32(uid) % shards;
}
