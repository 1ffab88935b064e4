import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import { connectRedis, redisReady } from "../../../platform/redis-client.ts";
import { RedisTokenStore } from "../../../api/auth/redis-token-store.ts";
import { TokenStoreUnavailable, type ManagedTokenStore } from "../../../api/auth/token-store.ts";
import { VerifiedTokens } from "../../../api/auth/verified-tokens.ts";
import { silentLogger } from "../../../core/logger.ts";
import { startRedis } from "../../support/redis.ts";
import { sleep, uniquePrefix } from "./support.ts";

const redisClients: Redis[] = [];
const caches: VerifiedTokens[] = [];
afterAll(() => {
  caches.forEach((c) => c.close());
  redisClients.forEach((r) => r.disconnect());
});

async function redisStore(): Promise<ManagedTokenStore> {
  const redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
  redisClients.push(redis);
  await redisReady(redis);
  return new RedisTokenStore(redis, { prefix: uniquePrefix("contract") });
}

/** The API's store: verified tokens answered from memory while revocations are heard (VerifiedTokens). */
async function verifyingRedisStore(): Promise<ManagedTokenStore> {
  const redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
  redisClients.push(redis);
  await redisReady(redis);
  const prefix = uniquePrefix("contract");
  const verified = new VerifiedTokens({ subscriber: redis.duplicate(), prefix, ttlMs: 60_000 });
  caches.push(verified);
  while (!verified.subscribed) await sleep(10);
  return new RedisTokenStore(redis, { prefix, verified });
}

/** The same contract for every store: the embedded default must behave as the deployed one does. */
describe.each([
  { name: "MemoryTokenStore", create: async (): Promise<ManagedTokenStore> => new MemoryTokenStore() },
  { name: "RedisTokenStore", create: redisStore },
  { name: "RedisTokenStore with VerifiedTokens", create: verifyingRedisStore },
])("token store contract: $name", ({ create }) => {
  let store: ManagedTokenStore;
  beforeAll(async () => {
    store = await create();
  });

  it("verifies an org token to an org principal whose subject is the token's id", async () => {
    const { token, record } = await store.createToken({ kind: "org", crews: ["research"] });
    expect(token).toMatch(/^kco_[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({ kind: "org", crews: ["research"], subject: record.id });
    expect(record.id).toMatch(/^tok_[0-9a-f]{16}$/);
    expect(record.expires).toBeUndefined();
    expect(await store.verify(token)).toEqual({ kind: "org", crews: ["research"], subject: record.id });
  });

  it("verifies a user token to its user", async () => {
    const { token } = await store.createToken({ kind: "user", crews: "*", user: "alice" });
    expect(token).toMatch(/^kcu_/);
    expect(await store.verify(token)).toEqual({ kind: "user", crews: "*", subject: "alice" });
    await expect(store.createToken({ kind: "user", crews: "*" })).rejects.toThrow("needs the user");
  });

  it("rejects unknown and altered tokens", async () => {
    const { token } = await store.createToken({ kind: "org", crews: "*" });
    const altered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    expect(await store.verify(altered)).toBeUndefined();
    expect(await store.verify("kco_" + "x".repeat(43))).toBeUndefined();
    expect(await store.verify("")).toBeUndefined();
  });

  it("lists org and user tokens by id without the tokens, and revokes by id", async () => {
    const a = await store.createToken({ kind: "org", crews: ["research"], ttlSeconds: 3600 });
    const b = await store.createToken({ kind: "user", crews: ["research"], user: "bob" });
    const listed = await store.listTokens();
    const ids = listed.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining([a.record.id, b.record.id]));
    expect(JSON.stringify(listed)).not.toContain(a.token);
    expect(JSON.stringify(listed)).not.toContain(b.token);
    expect(listed.find((t) => t.id === a.record.id)).toEqual(a.record);
    expect(Date.parse(a.record.expires!) - Date.parse(a.record.created)).toBe(3_600_000);

    expect(await store.revokeToken(a.record.id)).toBe(true);
    expect(await store.verify(a.token)).toBeUndefined();
    expect((await store.listTokens()).map((t) => t.id)).not.toContain(a.record.id);
    expect(await store.revokeToken(a.record.id)).toBe(false);
    expect(await store.revokeToken("tok_doesnotexist00")).toBe(false);
    expect(await store.verify(b.token)).toEqual({ kind: "user", crews: ["research"], subject: "bob" });
  });

  it("expires a token after its TTL: verify answers undefined and list leaves it out", async () => {
    const { token, record } = await store.createToken({ kind: "org", crews: "*", ttlSeconds: 1 });
    expect(await store.verify(token)).toBeDefined();
    await sleep(1100);
    expect(await store.verify(token)).toBeUndefined();
    expect((await store.listTokens()).map((t) => t.id)).not.toContain(record.id);
    expect(await store.revokeToken(record.id)).toBe(false);
  });

  it("authenticates a client only with its secret, compared as a whole", async () => {
    const { clientSecret, record } = await store.createClient({ role: "org", crews: ["research"], name: "ci" });
    expect(clientSecret).toMatch(/^kcs_[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({ role: "org", crews: ["research"], name: "ci" });
    expect(await store.authenticateClient(record.clientId, clientSecret)).toEqual(record);
    expect(await store.authenticateClient(record.clientId, clientSecret.slice(0, -1))).toBeUndefined();
    expect(await store.authenticateClient(record.clientId, "")).toBeUndefined();
    expect(await store.authenticateClient("client_unknown", clientSecret)).toBeUndefined();
    const clients = await store.listClients();
    expect(clients).toContainEqual(record);
    expect(JSON.stringify(clients)).not.toContain(clientSecret);
  });

  it("issues access tokens carrying the client's role and crews, valid until their TTL", async () => {
    const { record: client } = await store.createClient({ role: "user", crews: ["research"] });
    const issued = await store.issueAccessToken(client, 1);
    expect(issued!.token).toMatch(/^kca_[A-Za-z0-9_-]{43}$/);
    expect(issued!.record).toMatchObject({ kind: "user", crews: ["research"], subject: client.clientId });
    expect(await store.verify(issued!.token)).toEqual({ kind: "user", crews: ["research"], subject: client.clientId });
    expect((await store.listTokens()).map((t) => t.id)).not.toContain(issued!.record.id);
    await sleep(1100);
    expect(await store.verify(issued!.token)).toBeUndefined();
  });

  it("revoking a client ends its access tokens and its authentication", async () => {
    const { clientSecret, record: client } = await store.createClient({ role: "org", crews: "*" });
    const first = await store.issueAccessToken(client, 3600);
    const second = await store.issueAccessToken(client, 3600);
    const other = await store.createClient({ role: "org", crews: "*" });
    const unrelated = await store.issueAccessToken(other.record, 3600);

    expect(await store.revokeClient(client.clientId)).toBe(true);
    expect(await store.verify(first!.token)).toBeUndefined();
    expect(await store.verify(second!.token)).toBeUndefined();
    expect(await store.authenticateClient(client.clientId, clientSecret)).toBeUndefined();
    expect(await store.issueAccessToken(client, 3600)).toBeUndefined();
    expect((await store.listClients()).map((c) => c.clientId)).not.toContain(client.clientId);
    expect(await store.revokeClient(client.clientId)).toBe(false);
    expect(await store.verify(unrelated!.token)).toBeDefined();
  });

  it("revokes a single access token by id, leaving the client's others", async () => {
    const { record: client } = await store.createClient({ role: "org", crews: "*" });
    const first = await store.issueAccessToken(client, 3600);
    const second = await store.issueAccessToken(client, 3600);
    expect(await store.revokeToken(first!.record.id)).toBe(true);
    expect(await store.verify(first!.token)).toBeUndefined();
    expect(await store.verify(second!.token)).toBeDefined();
  });
});

describe("RedisTokenStore while Redis is down", () => {
  it("fails every operation with TokenStoreUnavailable at once, and works again when Redis returns", async () => {
    const server = await startRedis();
    const redis = connectRedis(server.url, { log: silentLogger() });
    redisClients.push(redis);
    await redisReady(redis);
    const store = new RedisTokenStore(redis);
    const { token } = await store.createToken({ kind: "org", crews: "*" });
    const { record: client, clientSecret } = await store.createClient({ role: "org", crews: "*" });
    await redis.save(); // as the chart's Redis persists (AOF); the test server only keeps what SAVE writes
    await server.stop();

    const started = Date.now();
    const attempts: Array<() => Promise<unknown>> = [
      () => store.verify(token),
      () => store.createToken({ kind: "org", crews: "*" }),
      () => store.listTokens(),
      () => store.revokeToken("tok_x"),
      () => store.createClient({ role: "org", crews: "*" }),
      () => store.listClients(),
      () => store.revokeClient(client.clientId),
      () => store.authenticateClient(client.clientId, clientSecret),
      () => store.issueAccessToken(client, 60),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(TokenStoreUnavailable);
    expect(Date.now() - started).toBeLessThan(1000);

    await server.start();
    await redisReady(redis);
    expect(await store.verify(token)).toEqual({ kind: "org", crews: "*", subject: expect.any(String) });
    expect(await store.authenticateClient(client.clientId, clientSecret)).toEqual(client);
    await server.stop();
  });
});

describe("RedisTokenStore expiry", () => {
  it("checks the expiry itself too, not only through Redis key expiry", async () => {
    const redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
    redisClients.push(redis);
    await redisReady(redis);
    const prefix = uniquePrefix("expiry");
    const { token } = await new RedisTokenStore(redis, { prefix }).createToken({
      kind: "org",
      crews: "*",
      ttlSeconds: 3600,
    });
    const twoHoursLater = new RedisTokenStore(redis, { prefix, now: () => Date.now() + 7_200_000 });
    expect(await twoHoursLater.verify(token)).toBeUndefined();
    expect(await new RedisTokenStore(redis, { prefix }).verify(token)).toBeDefined();
  });
});
