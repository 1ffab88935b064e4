import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RedisTokenStore } from "../../../api/auth/redis-token-store.ts";
import { VerifiedTokens } from "../../../api/auth/verified-tokens.ts";
import { silentLogger } from "../../../core/logger.ts";
import { connectRedis, redisReady } from "../../../platform/redis-client.ts";
import { sleep, uniquePrefix } from "./support.ts";

/**
 * An API replica answers a token it verified a moment ago from memory (no Redis round trip per request), and a
 * revocation made anywhere — another replica, `kubecrew token revoke`, the admin API — reaches it at once.
 */
describe("verified tokens answered from memory", () => {
  const prefix = uniquePrefix("verified");
  let redis: Redis;
  let operator: Redis;
  let verified: VerifiedTokens;
  /** This replica's store. */
  let replica: RedisTokenStore;
  /** Another process's store (the CLI, another replica's admin API). */
  let elsewhere: RedisTokenStore;

  beforeAll(async () => {
    redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
    operator = connectRedis(inject("redisUrl"), { log: silentLogger() });
    await Promise.all([redisReady(redis), redisReady(operator)]);
    verified = new VerifiedTokens({ subscriber: redis.duplicate(), prefix, ttlMs: 60_000 });
    replica = new RedisTokenStore(redis, { prefix, verified });
    elsewhere = new RedisTokenStore(operator, { prefix });
    await waitUntil(() => verified.subscribed);
  });
  afterAll(() => {
    verified.close();
    redis.disconnect();
    operator.disconnect();
  });

  async function waitUntil(check: () => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error("not within 10 s");
      await sleep(10);
    }
  }
  /** Deletes a token's key behind the store's back (no revocation published): only memory can still answer it. */
  const dropKey = async (token: string) => {
    const { secretHash } = await import("../../../api/auth/token-format.ts");
    await operator.del(`${prefix}token:${secretHash(token).toString("hex")}`);
  };

  it("answers a token verified a moment ago without asking Redis", async () => {
    const { token, record } = await elsewhere.createToken({ kind: "org", crews: "*" });
    expect(await replica.verify(token)).toEqual({ kind: "org", crews: "*", subject: record.id });
    await dropKey(token);
    expect(await replica.verify(token)).toEqual({ kind: "org", crews: "*", subject: record.id });
    // Without the cache the same store asks Redis and finds nothing.
    expect(await new RedisTokenStore(redis, { prefix }).verify(token)).toBeUndefined();
  });

  it("refuses at once a token revoked elsewhere", async () => {
    const { token, record } = await elsewhere.createToken({ kind: "user", crews: "*", user: "ada" });
    expect(await replica.verify(token)).toMatchObject({ kind: "user", subject: "ada" });
    expect(await elsewhere.revokeToken(record.id)).toBe(true);
    // The revoke script published before it answered; the subscriber's message is handled in this turn's I/O.
    await sleep(0);
    expect(await replica.verify(token)).toBeUndefined();
  });

  it("refuses at once the access tokens of a service account revoked elsewhere", async () => {
    const { record: client } = await elsewhere.createClient({ role: "org", crews: "*" });
    const issued = await elsewhere.issueAccessToken(client, 3600);
    expect(await replica.verify(issued!.token)).toMatchObject({ kind: "org" });
    expect(await elsewhere.revokeClient(client.clientId)).toBe(true);
    await sleep(0);
    expect(await replica.verify(issued!.token)).toBeUndefined();
  });

  it("never answers a token past its expiry", async () => {
    const { token } = await elsewhere.createToken({ kind: "org", crews: "*", ttlSeconds: 1 });
    expect(await replica.verify(token)).toBeDefined();
    await sleep(1100);
    expect(await replica.verify(token)).toBeUndefined();
  });

  it("answers nothing from memory while its revocation subscription is down, and again once it is back", async () => {
    const { token } = await elsewhere.createToken({ kind: "org", crews: "*" });
    expect(await replica.verify(token)).toBeDefined();
    await dropKey(token);
    // Revocations published while the subscription is away would be lost: the replica forgets and asks Redis.
    await operator.call("CLIENT", "KILL", "TYPE", "pubsub");
    await waitUntil(() => !verified.subscribed);
    expect(await replica.verify(token)).toBeUndefined();
    await waitUntil(() => verified.subscribed);
    const again = await elsewhere.createToken({ kind: "org", crews: "*" });
    expect(await replica.verify(again.token)).toBeDefined();
    await dropKey(again.token);
    expect(await replica.verify(again.token)).toBeDefined();
  });
});
