import type { Redis } from "ioredis";
import { isRedisUnavailable } from "../platform/redis-client.ts";
import { ConnectionStoreUnavailable, type IntegrationsStore } from "./store.ts";

// Delete the lock only if it still holds our token, so a holder that overran its TTL never frees someone else's lock.
const unlockScript = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** The deployed store: Redis, shared by every replica (one key per value, a hash per index, locks by SET NX PX). */
export class RedisStore implements IntegrationsStore {
  readonly kind = "redis";
  private readonly redis: Redis;

  constructor(redis: Redis) {
    this.redis = redis;
  }

  /** Runs Redis commands; Redis being away becomes ConnectionStoreUnavailable (a 503), anything else is thrown on. */
  private async run<T>(commands: () => Promise<T>): Promise<T> {
    try {
      return await commands();
    } catch (error) {
      if (isRedisUnavailable(error)) throw new ConnectionStoreUnavailable(error);
      throw error;
    }
  }

  async get(key: string) {
    return this.run(async () => (await this.redis.get(key)) ?? undefined);
  }

  async getMany(keys: string[]) {
    return this.run(async () => {
      if (keys.length === 0) return [];
      return (await this.redis.mget(keys)).map((raw) => raw ?? undefined);
    });
  }

  async take(key: string) {
    return this.run(async () => (await this.redis.getdel(key)) ?? undefined);
  }

  async putFor(key: string, value: string, ttlMs: number) {
    return this.run(async () => {
      await this.redis.set(key, value, "PX", ttlMs);
    });
  }

  async putUntil(key: string, value: string, atMs: number) {
    return this.run(async () => {
      await this.redis.set(key, value, "PXAT", atMs);
    });
  }

  async replace(key: string, value: string) {
    return this.run(async () => (await this.redis.set(key, value, "XX")) === "OK");
  }

  async exists(key: string) {
    return this.run(async () => (await this.redis.exists(key)) === 1);
  }

  async indexGet(key: string, field: string) {
    return this.run(async () => (await this.redis.hget(key, field)) ?? undefined);
  }

  indexAll(key: string) {
    return this.run(() => this.redis.hgetall(key));
  }

  async putIndexed(record: { key: string; value: string }, index: { key: string; field: string; value: string }) {
    return this.run(async () => {
      await this.redis.multi().set(record.key, record.value).hset(index.key, index.field, index.value).exec();
    });
  }

  async deleteIndexed(recordKey: string, index: { key: string; field: string }) {
    return this.run(async () => {
      await this.redis.multi().del(recordKey).hdel(index.key, index.field).exec();
    });
  }

  async tryLock(key: string, holder: string, ttlMs: number) {
    return this.run(async () => (await this.redis.set(key, holder, "PX", ttlMs, "NX")) === "OK");
  }

  async unlock(key: string, holder: string) {
    return this.run(async () => {
      await this.redis.eval(unlockScript, 1, key, holder);
    });
  }

  reachable(): Promise<boolean> {
    const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 1_000).unref());
    const ping = this.redis.ping().then(
      (reply) => reply === "PONG",
      () => false,
    );
    return Promise.race([ping, timeout]);
  }
}
