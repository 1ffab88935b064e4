import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectRedis, redisReady } from "../../../platform/redis-client.ts";
import { silentLogger } from "../../../core/logger.ts";
import { createAppCredentialRevocations } from "../../../integrations/apps/app-credential-revocations.ts";
import { createSignInStore } from "../../../integrations/connect-sessions.ts";
import { createConnectionStore, type ProviderTokens } from "../../../integrations/connection-store.ts";
import { MemoryStore } from "../../../integrations/memory-store.ts";
import { redisKeys } from "../../../integrations/redis-keys.ts";
import { RedisStore } from "../../../integrations/redis-store.ts";
import { tryLock } from "../../../integrations/refresh-lock.ts";
import type { IntegrationsStore } from "../../../integrations/store.ts";
import { createTokenCipher, TamperedCiphertextError } from "../../../integrations/token-cipher.ts";
import { dumpRedis, uniquePrefix } from "./harness.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const redisClients: Redis[] = [];
afterAll(() => redisClients.forEach((r) => r.disconnect()));

interface Backend {
  store: IntegrationsStore;
  prefix: string;
  /** Everything the store holds under the prefix, as text. */
  dump(): Promise<string>;
}

async function redisBackend(): Promise<Backend> {
  const redis = connectRedis(inject("redisUrl"), { log: silentLogger() });
  redisClients.push(redis);
  await redisReady(redis);
  const prefix = uniquePrefix("store-contract");
  return {
    store: new RedisStore(redis),
    prefix,
    dump: async () => JSON.stringify([...(await dumpRedis(inject("redisUrl"), prefix)).entries()]),
  };
}

async function memoryBackend(): Promise<Backend> {
  const store = new MemoryStore();
  return { store, prefix: "kubecrew:integrations:", dump: async () => JSON.stringify(store.snapshot()) };
}

const secret = () => `tok-${randomBytes(24).toString("base64url")}`;
const tokensOf = (overrides: Partial<ProviderTokens> = {}): ProviderTokens => ({
  accessToken: secret(),
  refreshToken: secret(),
  tokenType: "Bearer",
  expiresAt: new Date(Date.now() + 3600_000),
  scopes: ["https://www.googleapis.com/auth/gmail.send"],
  ...overrides,
});

/**
 * The one contract of the integrations service's store: the embedded default (`kubecrew dev` without KUBECREW_REDIS_URL,
 * MemoryStore) must behave as the deployed one (RedisStore) does, connection tokens sealed the same way in both.
 */
describe.each([
  { name: "MemoryStore", create: memoryBackend },
  { name: "RedisStore", create: redisBackend },
])("integrations store contract: $name", ({ create }) => {
  let backend: Backend;
  let keys: ReturnType<typeof redisKeys>;
  const cipher = createTokenCipher(randomBytes(32));
  const connectionsOf = () => createConnectionStore(backend.store, keys, cipher, () => new Date());
  beforeAll(async () => {
    backend = await create();
    keys = redisKeys(backend.prefix);
  });

  it("keeps a connection with its tokens sealed: readable through the store, never held in clear", async () => {
    const connections = connectionsOf();
    const tokens = tokensOf();
    const saved = await connections.saveSignIn({
      userId: "alice",
      provider: "google",
      product: "gmail",
      account: { subject: "sub-alice", email: "alice@example.com" },
      tokens,
    });
    expect(saved).toMatchObject({ userId: "alice", status: "active", hasRefreshToken: true });
    expect(JSON.stringify(saved)).not.toContain(tokens.accessToken);
    expect(await connections.readTokens(saved.id)).toEqual({ connection: saved, tokens });

    const held = await backend.dump();
    expect(held).toContain(saved.id);
    expect(held).toMatch(new RegExp(`sealedAccessToken\\W+v1\\.${cipher.keyId}\\.`));
    expect(held.includes(tokens.accessToken), "the access token in clear").toBe(false);
    expect(held.includes(tokens.refreshToken!), "the refresh token in clear").toBe(false);

    // Under another key the sealed tokens do not open.
    const other = createConnectionStore(backend.store, keys, createTokenCipher(randomBytes(32)), () => new Date());
    await expect(other.readTokens(saved.id)).rejects.toBeInstanceOf(TamperedCiphertextError);
  });

  it("replaces a reconnected product's connection in place, lists a user's own, deletes one", async () => {
    const connections = connectionsOf();
    const first = await connections.saveSignIn({
      userId: "bob",
      provider: "google",
      product: "gmail",
      account: {},
      tokens: tokensOf(),
    });
    const again = tokensOf({ refreshToken: undefined });
    const second = await connections.saveSignIn({
      userId: "bob",
      provider: "google",
      product: "gmail",
      account: { email: "bob@example.com" },
      tokens: again,
    });
    expect(second.id).toBe(first.id);
    expect(second.hasRefreshToken).toBe(false);
    expect((await connections.readTokens(first.id))!.tokens.accessToken).toBe(again.accessToken);
    const notes = await connections.saveSignIn({
      userId: "bob",
      provider: "notion",
      product: "notes",
      account: {},
      tokens: tokensOf(),
    });
    expect((await connections.listForUser("bob")).map((c) => c.id).sort()).toEqual([first.id, notes.id].sort());
    expect(await connections.listForUser("nobody")).toEqual([]);

    await connections.delete(second);
    expect(await connections.get(first.id)).toBeUndefined();
    expect((await connections.listForUser("bob")).map((c) => c.id)).toEqual([notes.id]);
  });

  it("stores a refresh: a response without a refresh token keeps the stored one; nothing for a deleted connection", async () => {
    const connections = connectionsOf();
    const tokens = tokensOf();
    const saved = await connections.saveSignIn({
      userId: "carol",
      provider: "google",
      product: "gmail",
      account: {},
      tokens,
    });
    await connections.markReauthorizationRequired(saved.id);
    expect((await connections.get(saved.id))!.status).toBe("reauthorization_required");
    const refreshed = tokensOf({ refreshToken: undefined });
    expect(await connections.saveRefreshed(saved.id, refreshed)).toMatchObject({ status: "active" });
    expect((await connections.readTokens(saved.id))!.tokens).toEqual({
      ...refreshed,
      refreshToken: tokens.refreshToken,
    });
    const held = await backend.dump();
    for (const token of [tokens.accessToken, tokens.refreshToken!, refreshed.accessToken])
      expect(held.includes(token), "a token in clear").toBe(false);

    await connections.delete(saved);
    expect(await connections.saveRefreshed(saved.id, tokensOf())).toBeUndefined();
    await connections.markReauthorizationRequired(saved.id);
    expect(await backend.store.replace(keys.connection(saved.id), "{}")).toBe(false);
    expect(await connections.get(saved.id)).toBeUndefined();
  });

  it("hands a connect session and a sign-in state out once, and not after their lifetime", async () => {
    const signIns = createSignInStore(backend.store, keys);
    const request = { userId: "alice", provider: "google", product: "gmail", returnUrl: "http://127.0.0.1/console/" };
    const id = await signIns.createConnectSession(request, 60);
    expect(await backend.dump()).not.toContain(id);
    expect(await signIns.takeConnectSession(id)).toEqual(request);
    expect(await signIns.takeConnectSession(id)).toBeUndefined();

    await signIns.savePendingSignIn("state-1", { ...request, nonce: "n" }, 60);
    expect(await signIns.takePendingSignIn("state-1")).toEqual({ ...request, nonce: "n" });
    expect(await signIns.takePendingSignIn("state-1")).toBeUndefined();

    const expiring = await signIns.createConnectSession(request, 1);
    await signIns.savePendingSignIn("state-2", request, 1);
    await sleep(1100);
    expect(await signIns.takeConnectSession(expiring)).toBeUndefined();
    expect(await signIns.takePendingSignIn("state-2")).toBeUndefined();
  });

  it("lets one holder take a refresh lock; it frees itself after its TTL and only its holder frees it", async () => {
    const key = keys.refreshLock(`c-${randomBytes(4).toString("hex")}`);
    const first = await tryLock(backend.store, key, 300);
    expect(first).toBeDefined();
    expect(await tryLock(backend.store, key, 300)).toBeUndefined();
    await first!.release();
    const second = await tryLock(backend.store, key, 300);
    expect(second).toBeDefined();
    await sleep(400);
    // The first holder overran its TTL: a third caller takes the lock, and the second's late release leaves it alone.
    const third = await tryLock(backend.store, key, 5_000);
    expect(third).toBeDefined();
    await second!.release();
    expect(await tryLock(backend.store, key, 300)).toBeUndefined();
    await third!.release();
  });

  it("keeps a revoked credential refused until its expiry, and nothing for one already expired", async () => {
    const revocations = createAppCredentialRevocations(backend.store, keys, () => new Date());
    await revocations.revoke("exec-1", new Date(Date.now() + 400));
    await revocations.revoke("exec-2", new Date(Date.now() - 1000));
    expect(await revocations.isRevoked("exec-1")).toBe(true);
    expect(await revocations.isRevoked("exec-2")).toBe(false);
    expect(await revocations.isRevoked("exec-3")).toBe(false);
    await sleep(500);
    expect(await revocations.isRevoked("exec-1")).toBe(false);
  });

  it("answers the readiness probe", async () => {
    expect(await backend.store.reachable()).toBe(true);
  });
});
